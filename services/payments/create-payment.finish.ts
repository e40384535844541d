import type { OwnedRequest } from '../../lib/idempotency/owned-request.ts';
import {
  interventionStatement,
  type InterventionAction,
} from '../../lib/idempotency/settlement.ts';
import type { StoredAnswer } from '../../lib/idempotency/types.ts';
import { isFailedCheck } from '../../lib/db/failed-checks.ts';
import type { ChargeOutcome } from '../provider/contract.ts';
import { paymentOutcomeEvent } from './payment-events.ts';
import { toPaymentView, type PaymentRow } from './payment.view.ts';
import type { PaymentsDeps } from './payments.deps.ts';
import { PAYMENT_CHECKS, RECORD_CHARGE_OUTCOME, SELECT_PAYMENT } from './payments.sql.ts';

/** How a settlement came about, recorded with the final phase (null on the normal path). */
export interface Settlement {
  action: InterventionAction;
  decidedBy: string;
  reason: string;
}

/**
 * The final phase of createPayment: the provider's outcome on the payment, the stored
 * response and `finished`, in one transaction. The normal path, reconciliation and an
 * operator's resolution all end here, so a settled payment is exactly what the normal path
 * would have made.
 */
export async function finishWithOutcome(
  deps: PaymentsDeps,
  final: {
    request: OwnedRequest;
    payment: PaymentRow;
    outcome: Extract<ChargeOutcome, { kind: 'approved' | 'declined' }>;
    settlement: Settlement | null;
  },
): Promise<StoredAnswer> {
  const { request, payment, settlement } = final;
  const settled = { ...settle(payment, final.outcome), ...nextVersionOf(payment) };
  // The outcome, its event and the settlement's record commit with the fence in one round trip.
  // A payment found in another status than PROCESSING fails RECORD_CHARGE_OUTCOME, and the
  // phase commits nothing.
  const { tenantId } = request.scope;
  const statements = [
    {
      text: RECORD_CHARGE_OUTCOME,
      values: [
        tenantId,
        payment.id,
        settled.status,
        settled.amount_captured_minor,
        settled.provider_reference,
        settled.failure_code,
        settled.updated_at,
      ],
    },
    paymentOutcomeEvent({ tenantId, payment: settled }),
    ...(settlement === null
      ? []
      : [
          interventionStatement({
            request,
            ...settlement,
            providerReference: settled.provider_reference,
          }),
        ]),
  ];
  try {
    return await request.finish({ payment: toPaymentView(settled) }, statements);
  } catch (error) {
    if (isFailedCheck(error, PAYMENT_CHECKS.paymentNotProcessing)) {
      throw new Error(`payment ${payment.id} left PROCESSING before its outcome`, {
        cause: error,
      });
    }
    throw error;
  }
}

export async function loadPayment(
  pool: PaymentsDeps['pool'],
  id: { tenantId: string; paymentId: string },
): Promise<PaymentRow | undefined> {
  const { rows } = await pool.query<PaymentRow>(SELECT_PAYMENT, [id.tenantId, id.paymentId]);
  return rows[0];
}

/**
 * The version and instant the outcome gives the payment: what RECORD_CHARGE_OUTCOME writes, known
 * here because the answer is sealed before the statement runs, in the same round trip. The
 * instant is this process's clock, kept strictly after the insert's (the row holds microseconds,
 * the Date only milliseconds), so a payment's updatedAt never goes back as its version rises.
 */
function nextVersionOf(payment: PaymentRow): Pick<PaymentRow, 'version' | 'updated_at'> {
  const afterInsert = payment.updated_at.getTime() + 1;
  return { version: payment.version + 1, updated_at: new Date(Math.max(Date.now(), afterInsert)) };
}

/** The payment as the provider's answer leaves it. */
function settle(
  payment: PaymentRow,
  outcome: Extract<ChargeOutcome, { kind: 'approved' | 'declined' }>,
): PaymentRow {
  if (outcome.kind === 'declined') {
    return {
      ...payment,
      status: 'FAILED',
      provider_reference: outcome.providerReference,
      failure_code: outcome.failureCode,
    };
  }
  return outcome.captured
    ? {
        ...payment,
        status: 'SUCCEEDED',
        amount_captured_minor: payment.amount_minor,
        provider_reference: outcome.providerReference,
      }
    : { ...payment, status: 'REQUIRES_CAPTURE', provider_reference: outcome.providerReference };
}
