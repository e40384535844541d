import type { PaymentsDeps } from './payments.deps.ts';
import { InputInvalidError } from '../../lib/errors.ts';
import { PAYMENT_ERRORS } from './payments.errors.ts';
import { defineOperation } from '../../lib/idempotency/operation.ts';
import { PAYMENT_ANSWER_VERSION, paymentOutcomeOf } from './stored-answers.ts';
import { parseAmount } from '../../lib/money/money.ts';
import {
  paymentOperationResumer,
  runPaymentOperation,
  type PaymentOperationSpec,
} from './payment-operation.flow.ts';
import type { OperationInput } from './payment-operation.command.ts';
import type { OperationResult } from './payment-operation.answers.ts';
import { APPLY_REFUND, SELECT_REFUNDABLE } from './payments.sql.ts';
import type { PaymentRow } from './payment.view.ts';

export const REFUND_PAYMENT = defineOperation({
  id: 'payments.refund.v1',
  publicName: 'refundPayment',
  service: 'payments',
  answerVersion: PAYMENT_ANSWER_VERSION,
  outcomeOf: paymentOutcomeOf,
});

/**
 * refundPayment: partial, several per payment, never more than was captured. Refunds in flight
 * count against what is refundable, and the payment's row lock puts concurrent refunds (under
 * different keys) in a line, so two of them can never both take the last euro.
 * Recovery points: provider_refund_sent (the refund row and its derived key) → finished.
 */
export const REFUND_SPEC: PaymentOperationSpec = {
  operation: REFUND_PAYMENT,
  kind: 'refund',
  providerKind: 'refund',
  sentPoint: 'provider_refund_sent',
  listedOnPayment: true,
  async check(tx, { tenantId, payment, command }) {
    if (command.amount === null) throw new InputInvalidError('amount', 'amount is required');
    const parsed = parseAmount(command.amount, payment.currency);
    if (!parsed.ok && parsed.error !== 'AMOUNT_TOO_LARGE') {
      throw new InputInvalidError('amount', `amount is not a valid ${payment.currency} amount`);
    }
    if (payment.status !== 'SUCCEEDED' || payment.amount_captured_minor === '0')
      return { refuse: PAYMENT_ERRORS.INVALID_PAYMENT_STATE };
    const { rows } = await tx.query<{ refundable_minor: string }>(SELECT_REFUNDABLE, [
      tenantId,
      payment.id,
      payment.amount_captured_minor,
    ]);
    const refundable = BigInt(rows[0]?.refundable_minor ?? '0');
    if (!parsed.ok || parsed.minor > refundable)
      return { refuse: PAYMENT_ERRORS.AMOUNT_EXCEEDS_REFUNDABLE };
    return { amountMinor: parsed.minor.toString() };
  },
  async apply(tx, { tenantId, payment, operation }) {
    const { rows } = await tx.query<PaymentRow>(APPLY_REFUND, [
      tenantId,
      payment.id,
      operation.amount_minor,
    ]);
    if (rows[0] === undefined) throw new Error(`payment ${payment.id} vanished during its refund`);
    return rows[0];
  },
};

export const REFUND_PAYMENT_FAULT_POINTS = [
  'refundPayment.provider_refund_sent.before-commit',
  'refundPayment.provider_refund_sent.after-commit',
  'refundPayment.provider_call.before-call',
  'refundPayment.provider_call.after-call',
  'refundPayment.finished.before-commit',
  'refundPayment.finished.after-commit',
] as const;

export function refundPayment(deps: PaymentsDeps, input: OperationInput): Promise<OperationResult> {
  return runPaymentOperation(deps, { spec: REFUND_SPEC, input });
}

export const refundPaymentResumer = (deps: PaymentsDeps) =>
  paymentOperationResumer(deps, REFUND_SPEC);
