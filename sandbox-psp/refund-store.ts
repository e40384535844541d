// In-memory record of applied refunds. As with charges, callers only ever receive copies, and
// the store stamps createdAt from the books clock at insertion.
import type { BooksClock } from './books-clock.ts';
import type { Refund, RefundDraft } from './operation-types.ts';

export interface RefundStore {
  /** Records a refund and returns a copy; a second refund for one key is a bug, so it throws. */
  insert(draft: RefundDraft): Refund;
  byIdempotencyKey(idempotencyKey: string): Refund | undefined;
  /** Every refund, or those of one charge, oldest first. */
  list(filter?: { chargeId?: string }): Refund[];
}

export function createRefundStore(deps: { clock: BooksClock }): RefundStore {
  // Insertion order is creation order, so "oldest first" needs no sorting.
  const refundsByKey = new Map<string, Refund>();

  return {
    insert(draft) {
      if (refundsByKey.has(draft.idempotencyKey)) {
        throw new Error(`duplicate refund for idempotency key ${draft.idempotencyKey}`);
      }
      const refund: Refund = { ...draft, createdAt: new Date(deps.clock.nowMs()).toISOString() };
      refundsByKey.set(refund.idempotencyKey, refund);
      return { ...refund };
    },
    byIdempotencyKey(idempotencyKey) {
      const refund = refundsByKey.get(idempotencyKey);
      return refund === undefined ? undefined : { ...refund };
    },
    list(filter) {
      const chargeId = filter?.chargeId;
      return [...refundsByKey.values()]
        .filter((refund) => chargeId === undefined || refund.chargeId === chargeId)
        .map((refund) => ({ ...refund }));
    },
  };
}
