/**
 * How the clients journal what the SDK answered. Each operation kind always goes through the
 * same SDK method, which always sends the same document, so two answers for one key can be
 * compared field for field: `canonical` is what every later answer for the key must equal.
 */
import type { AttemptReport, PaymentsApiError } from '../../packages/client/src/index.ts';
import type { FinalRecord } from './journal.ts';

/** Business refusals: stored for the key and replayed with the same code (docs/api.md §3). */
const STORED_ERRORS: ReadonlySet<string> = new Set([
  'PAYMENT_NOT_FOUND',
  'INVALID_PAYMENT_STATE',
  'AMOUNT_EXCEEDS_CAPTURABLE',
  'AMOUNT_EXCEEDS_REFUNDABLE',
]);

/** A result: the payload as the gateway sent it, its status, and whether it was a replay. */
export function finalOfResult(input: {
  payload: Record<string, unknown>;
  /** The attempt that brought it. */
  last: AttemptReport | undefined;
  phase: FinalRecord['phase'];
}): FinalRecord {
  const { payload } = input;
  const status = input.last?.httpStatus ?? 0;
  const idempotency = payload['idempotency'] as { replayed?: boolean } | undefined;
  const { replayed, ...rest } = idempotency ?? {};
  return {
    status,
    code: null,
    replayed: replayed === true,
    canonical: JSON.stringify({ status, ...payload, idempotency: rest }),
    data: payload,
    phase: input.phase,
    receivedAt: Date.now(),
  };
}

/**
 * A refusal the SDK did not retry: a stored business refusal (final), or an answer the contract
 * does not allow for this request (IDEMPOTENCY_KEY_REUSED, a validation error...), or null when
 * the refusal is still open (the deadline came first).
 */
export function readRefusal(input: {
  error: PaymentsApiError;
  last: AttemptReport | undefined;
  phase: FinalRecord['phase'];
}):
  | { kind: 'final'; final: FinalRecord }
  | { kind: 'unexpected'; status: number; code: string; body: string }
  | { kind: 'open' } {
  const { error } = input;
  if (error.retryable) return { kind: 'open' };
  const status = error.httpStatus ?? 0;
  if (!STORED_ERRORS.has(error.code)) {
    return { kind: 'unexpected', status, code: error.code, body: error.message.slice(0, 500) };
  }
  return {
    kind: 'final',
    final: {
      status,
      code: error.code,
      replayed: input.last?.replayed === true,
      canonical: JSON.stringify({ status, code: error.code, message: error.message }),
      data: null,
      phase: input.phase,
      receivedAt: Date.now(),
    },
  };
}
