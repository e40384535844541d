// The provider's own idempotency: one stored result per Idempotency-Key, plus a per-key queue so
// that "is there a result?" and "store the result" can never interleave with another request for
// the same key. Without the queue, two concurrent requests would both see "no result" across an
// await (e.g. pm_card_slow's sleep) and both create a charge.
// A key is remembered for ever unless a retention is set (SANDBOX_KEY_RETENTION_SECONDS): then,
// as at a real provider (Stripe keeps keys 24 hours), a key older than that is a new key, and a
// request sent under it again acts again. The charges and refunds it made stay in the books.
// Charge creation and the operations on charges share one key space, as at a real provider:
// a key bound to one kind of request is a mismatch for any other.
import type { ChargeRequest, JsonAnswer } from './charge-types.ts';
import { createExclusiveQueue } from './exclusive-queue.ts';
import { errorAnswer } from './http-json.ts';
import type { OperationRequest } from './operation-types.ts';

/** What a key is bound to: the kind of request and every parameter a repeat must match. */
export type BoundRequest = ({ kind: 'charge' } & ChargeRequest) | OperationRequest;

/** The answer given the first time, frozen, plus the parameters the key is now bound to. */
export interface StoredResult {
  request: BoundRequest;
  answer: JsonAnswer;
}

export interface IdempotencyLedger {
  /** The key's result, unless it has none or was stored longer ago than the retention. */
  get(idempotencyKey: string): StoredResult | undefined;
  /** Binds a key to its one result; storing twice within the retention is a bug in the caller,
   * so it throws. */
  store(idempotencyKey: string, result: StoredResult): void;
  /** Runs `work` after every earlier piece of work for the same key has settled. */
  runExclusive<T>(idempotencyKey: string, work: () => Promise<T>): Promise<T>;
}

/** Field-by-field over both requests' fields, so a field added to one request shape is
 * compared without anyone remembering to list it here. Every field is a primitive. */
export function sameParameters(a: BoundRequest, b: BoundRequest): boolean {
  const fieldsOfA: Record<string, unknown> = { ...a };
  const fieldsOfB: Record<string, unknown> = { ...b };
  const names = new Set([...Object.keys(fieldsOfA), ...Object.keys(fieldsOfB)]);
  return [...names].every((name) => fieldsOfA[name] === fieldsOfB[name]);
}

/** What the ledger already says about this key: the stored answer replayed, a 422 for other
 * parameters, or undefined when the key is still unbound. Call it inside the key's queue. */
export function answerFromLedger(
  ledger: IdempotencyLedger,
  attempt: { idempotencyKey: string; request: BoundRequest },
): JsonAnswer | undefined {
  const stored = ledger.get(attempt.idempotencyKey);
  if (stored === undefined) return undefined;
  if (!sameParameters(stored.request, attempt.request)) {
    return errorAnswer({ status: 422, code: 'IDEMPOTENCY_KEY_MISMATCH' });
  }
  const headers = { ...stored.answer.headers, 'Idempotent-Replayed': 'true' };
  return { ...stored.answer, headers };
}

export function createIdempotencyLedger(
  options: {
    /** How long a key is remembered; undefined: for ever. */
    retentionMs?: number | undefined;
  } = {},
): IdempotencyLedger {
  const results = new Map<string, StoredResult & { storedAtMs: number }>();
  const queue = createExclusiveQueue();
  const { retentionMs } = options;
  const remembered = (idempotencyKey: string) => {
    const stored = results.get(idempotencyKey);
    if (stored === undefined) return undefined;
    if (retentionMs !== undefined && Date.now() - stored.storedAtMs >= retentionMs)
      return undefined;
    return stored;
  };

  return {
    get(idempotencyKey) {
      const stored = remembered(idempotencyKey);
      if (stored === undefined) return undefined;
      const { request, answer } = stored;
      return structuredClone({ request, answer });
    },
    store(idempotencyKey, result) {
      if (remembered(idempotencyKey) !== undefined) {
        throw new Error(`idempotency key ${idempotencyKey} already has a result`);
      }
      results.set(idempotencyKey, { ...structuredClone(result), storedAtMs: Date.now() });
    },
    runExclusive: (idempotencyKey, work) => queue.runExclusive(idempotencyKey, work),
  };
}
