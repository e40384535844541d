import type { PaymentsDeps } from './payments.deps.ts';
import { defineOperation } from '../../lib/idempotency/operation.ts';
import { PAYMENT_ANSWER_VERSION, paymentOutcomeOf } from './stored-answers.ts';
import {
  paymentOperationResumer,
  runPaymentOperation,
  type PaymentOperationSpec,
} from './payment-operation.flow.ts';
import type { OperationInput } from './payment-operation.command.ts';
import type { OperationResult } from './payment-operation.answers.ts';
import { applySettlement, settlementRefusal } from './settlement-rules.ts';

export const CANCEL_PAYMENT = defineOperation({
  id: 'payments.cancel.v1',
  publicName: 'cancelPayment',
  service: 'payments',
  answerVersion: PAYMENT_ANSWER_VERSION,
  outcomeOf: paymentOutcomeOf,
});

/**
 * cancelPayment: voids an authorisation that was not captured. Recovery points:
 * provider_void_sent (the cancel row and its derived key) → finished.
 */
export const CANCEL_SPEC: PaymentOperationSpec = {
  operation: CANCEL_PAYMENT,
  kind: 'cancel',
  providerKind: 'void',
  sentPoint: 'provider_void_sent',
  listedOnPayment: false,
  async check(tx, { tenantId, payment }) {
    const refusal = await settlementRefusal(tx, { tenantId, payment });
    return refusal === null ? { amountMinor: null } : { refuse: refusal };
  },
  apply: (tx, { tenantId, payment }) =>
    applySettlement(tx, {
      tenantId,
      payment,
      status: 'CANCELED',
      capturedMinor: payment.amount_captured_minor,
    }),
};

export const CANCEL_PAYMENT_FAULT_POINTS = [
  'cancelPayment.provider_void_sent.before-commit',
  'cancelPayment.provider_void_sent.after-commit',
  'cancelPayment.provider_call.before-call',
  'cancelPayment.provider_call.after-call',
  'cancelPayment.finished.before-commit',
  'cancelPayment.finished.after-commit',
] as const;

export function cancelPayment(
  deps: PaymentsDeps,
  input: Omit<OperationInput, 'amount'>,
): Promise<OperationResult> {
  return runPaymentOperation(deps, {
    spec: CANCEL_SPEC,
    input: { ...input, amount: null, reason: null },
  });
}

export const cancelPaymentResumer = (deps: PaymentsDeps) =>
  paymentOperationResumer(deps, CANCEL_SPEC);
