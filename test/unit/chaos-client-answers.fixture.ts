/**
 * What the clients of a hand-made chaos run were told, journaled through the harness's own
 * readers (answers.ts) exactly as clients.ts journals the SDK's answers, so a canonical form or
 * a field the auditor reads cannot drift from what a real run records.
 */
import {
  PaymentsApiError,
  type AttemptReport,
  type Payment,
  type Refund,
} from '../../packages/client/src/index.ts';
import { finalOfResult, readRefusal } from '../chaos/answers.ts';
import type { FinalRecord } from '../chaos/journal.ts';
import { formatMinor, type PlannedOp } from '../chaos/plan.ts';
import type { OperationRow, PaymentRow } from '../chaos/snapshot.ts';

export const ANSWERED_AT = '2025-01-01T00:00:00.000Z';
const REPLAYABLE_UNTIL = '2025-01-02T00:00:00.000Z';

/**
 * A result: send 0 is the request's own, later sends are replays, answered from the stored
 * answer with `replayed: true`.
 */
export function resultAnswer(input: {
  op: PlannedOp;
  payload: Record<string, unknown>;
  send: number;
}): FinalRecord {
  const { op, send } = input;
  const idempotency = {
    key: op.key,
    replayed: send > 0,
    firstRequestAt: ANSWERED_AT,
    expiresAt: REPLAYABLE_UNTIL,
  };
  return finalOfResult({
    payload: { ...input.payload, idempotency },
    last: attempt({ op, httpStatus: 200, replayed: send > 0 }),
    phase: send === 0 ? 'first' : 'replay',
  });
}

/** A stored business refusal (422), as the SDK throws it and the client journals it. */
export function refusalAnswer(input: {
  op: PlannedOp;
  code: 'INVALID_PAYMENT_STATE' | 'AMOUNT_EXCEEDS_CAPTURABLE' | 'AMOUNT_EXCEEDS_REFUNDABLE';
  send: number;
}): FinalRecord {
  const { op, send } = input;
  const error = new PaymentsApiError({
    code: input.code,
    message: `${input.code} (stored for the key)`,
    httpStatus: 422,
    retryable: false,
    attempts: 1,
    requestIds: [`req-${op.index}-${send}`],
    idempotencyKey: op.key,
  });
  const refusal = readRefusal({
    error,
    last: attempt({ op, httpStatus: 422, replayed: send > 0 }),
    phase: send === 0 ? 'first' : 'replay',
  });
  if (refusal.kind !== 'final') throw new Error(`${input.code} is not a stored refusal`);
  return refusal.final;
}

/** What the SDK's onAttempt reported for the send that brought the answer. */
function attempt(input: { op: PlannedOp; httpStatus: number; replayed: boolean }): AttemptReport {
  return {
    operationName: input.op.kind,
    attempt: 1,
    requestId: `req-${input.op.index}`,
    idempotencyKey: input.op.key,
    outcome: input.httpStatus === 200 ? 'succeeded' : 'failed',
    httpStatus: input.httpStatus,
    code: null,
    replayed: input.replayed,
    paymentId: undefined,
    delayMs: undefined,
    durationMs: 12,
  };
}

/** The payment as the API shows it (PaymentFields), with the refunds among `operations`. */
export function paymentView(input: { row: PaymentRow; operations: OperationRow[] }): Payment {
  const { row } = input;
  const money = (minor: string) => formatMinor(Number(minor), row.currency);
  const refunds: Refund[] = input.operations
    .filter((o) => o.payment_id === row.id && o.kind === 'refund' && o.status === 'SUCCEEDED')
    .map((o) => ({
      id: o.id,
      paymentId: row.id,
      amount: money(o.amount_minor ?? '0'),
      status: 'SUCCEEDED',
      reason: 'chaos',
      createdAt: ANSWERED_AT,
    }));
  return {
    id: row.id,
    status: row.status as Payment['status'],
    amount: money(row.amount_minor),
    currency: row.currency,
    amountCaptured: money(row.amount_captured_minor),
    amountRefunded: money(row.amount_refunded_minor),
    paymentMethod: row.payment_method,
    captureMethod: row.capture_method as Payment['captureMethod'],
    reference: row.reference,
    providerReference: row.provider_reference,
    failureCode: row.failure_code,
    createdAt: ANSWERED_AT,
    refunds,
    description: null,
    metadata: null,
    // The auditors read no version: any state of the payment serves.
    version: 2,
    updatedAt: ANSWERED_AT,
  };
}
