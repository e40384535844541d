import type { PaymentsDeps } from './payments.deps.ts';
import type { OperationDef } from '../../lib/idempotency/operation.ts';
import type { Resumer } from '../../lib/idempotency/recovery-worker.ts';
import { CANCEL_PAYMENT, cancelPaymentResumer } from './cancel-payment.flow.ts';
import { CAPTURE_PAYMENT, capturePaymentResumer } from './capture-payment.flow.ts';
import { CREATE_PAYMENT, createPaymentResumer } from './create-payment.flow.ts';
import { REFUND_PAYMENT, refundPaymentResumer } from './refund-payment.flow.ts';

/** Every operation the payments service can resume from a recovery point, in one place: the
 * recovery worker, the gauges and the ops re-drive all read this list. */
export const RESUMABLE_OPERATIONS: readonly OperationDef[] = [
  CREATE_PAYMENT,
  CAPTURE_PAYMENT,
  REFUND_PAYMENT,
  CANCEL_PAYMENT,
];

export function paymentResumers(deps: PaymentsDeps): Resumer[] {
  return [
    createPaymentResumer(deps),
    capturePaymentResumer(deps),
    refundPaymentResumer(deps),
    cancelPaymentResumer(deps),
  ];
}
