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
import { applySettlement, settlementRefusal } from './settlement-rules.ts';

export const CAPTURE_PAYMENT = defineOperation({
  id: 'payments.capture.v1',
  publicName: 'capturePayment',
  service: 'payments',
  answerVersion: PAYMENT_ANSWER_VERSION,
  outcomeOf: paymentOutcomeOf,
});

/**
 * capturePayment: once per payment, for the authorised amount or less (the rest is released).
 * Recovery points: provider_capture_sent (the capture row and its derived key) → finished.
 */
export const CAPTURE_SPEC: PaymentOperationSpec = {
  operation: CAPTURE_PAYMENT,
  kind: 'capture',
  providerKind: 'capture',
  sentPoint: 'provider_capture_sent',
  listedOnPayment: false,
  async check(tx, { tenantId, payment, command }) {
    const refusal = await settlementRefusal(tx, { tenantId, payment });
    if (refusal !== null) return { refuse: refusal };
    if (command.amount === null) return { amountMinor: payment.amount_minor };
    const parsed = parseAmount(command.amount, payment.currency);
    // A malformed amount is the caller's input error, not a business outcome: nothing is stored.
    if (!parsed.ok && parsed.error !== 'AMOUNT_TOO_LARGE') {
      throw new InputInvalidError('amount', `amount is not a valid ${payment.currency} amount`);
    }
    if (!parsed.ok || parsed.minor > BigInt(payment.amount_minor))
      return { refuse: PAYMENT_ERRORS.AMOUNT_EXCEEDS_CAPTURABLE };
    return { amountMinor: parsed.minor.toString() };
  },
  apply: (tx, { tenantId, payment, operation }) =>
    applySettlement(tx, {
      tenantId,
      payment,
      status: 'SUCCEEDED',
      capturedMinor: operation.amount_minor ?? '0',
    }),
};

export const CAPTURE_PAYMENT_FAULT_POINTS = [
  'capturePayment.provider_capture_sent.before-commit',
  'capturePayment.provider_capture_sent.after-commit',
  'capturePayment.provider_call.before-call',
  'capturePayment.provider_call.after-call',
  'capturePayment.finished.before-commit',
  'capturePayment.finished.after-commit',
] as const;

export function capturePayment(
  deps: PaymentsDeps,
  input: OperationInput,
): Promise<OperationResult> {
  return runPaymentOperation(deps, { spec: CAPTURE_SPEC, input: { ...input, reason: null } });
}

export const capturePaymentResumer = (deps: PaymentsDeps) =>
  paymentOperationResumer(deps, CAPTURE_SPEC);
