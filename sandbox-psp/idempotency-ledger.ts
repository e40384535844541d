// The provider's own idempotency: one stored result per Idempotency-Key, ever, plus a per-key
// queue so that "is there a result?" and "store the result" can never interleave with another
// request for the same key. Without the queue, two concurrent requests would both see "no
// result" across an await (e.g. pm_card_slow's sleep) and both create a charge.
import type { ChargeRequest, JsonAnswer } from './charge-types.ts';

/** The answer given the first time, frozen, plus the parameters the key is now bound to. */
export interface StoredResult {
  request: ChargeRequest;
  answer: JsonAnswer;
}

export interface IdempotencyLedger {
  get(idempotencyKey: string): StoredResult | undefined;
  /** Binds a key to its one result; storing twice is a bug in the caller, so it throws. */
  store(idempotencyKey: string, result: StoredResult): void;
  /** Runs `work` after every earlier piece of work for the same key has settled. */
  runExclusive<T>(idempotencyKey: string, work: () => Promise<T>): Promise<T>;
}

export function sameParameters(a: ChargeRequest, b: ChargeRequest): boolean {
  return (
    a.amount === b.amount &&
    a.currency === b.currency &&
    a.paymentMethod === b.paymentMethod &&
    a.reference === b.reference &&
    a.capture === b.capture
  );
}

export function createIdempotencyLedger(): IdempotencyLedger {
  const results = new Map<string, StoredResult>();
  // Tail of each key's queue. Entries are removed once their queue drains so the map does not
  // grow with every key ever seen.
  const queueTails = new Map<string, Promise<void>>();

  return {
    get(idempotencyKey) {
      const stored = results.get(idempotencyKey);
      return stored === undefined ? undefined : structuredClone(stored);
    },
    store(idempotencyKey, result) {
      if (results.has(idempotencyKey)) {
        throw new Error(`idempotency key ${idempotencyKey} already has a result`);
      }
      results.set(idempotencyKey, structuredClone(result));
    },
    runExclusive(idempotencyKey, work) {
      const previous = queueTails.get(idempotencyKey) ?? Promise.resolve();
      // A failed predecessor must not block or fail its successors: they re-check the ledger.
      const run = previous.then(work);
      const tail = run.then(
        () => undefined,
        () => undefined,
      );
      queueTails.set(idempotencyKey, tail);
      void tail.then(() => {
        if (queueTails.get(idempotencyKey) === tail) queueTails.delete(idempotencyKey);
      });
      return run;
    },
  };
}
