// In-memory record of applied refunds. As with charges, callers only ever receive copies, and
// the store stamps createdAt from the books clock at insertion.
import type { BooksClock } from './books-clock.ts';
import type { Refund, RefundDraft } from './operation-types.ts';

export interface RefundStore {
  /** Records a refund and returns a copy. A second refund for a key happens only once the
   * ledger has forgotten the key (a retention). */
  insert(draft: RefundDraft): Refund;
  /** The newest refund made under the key. */
  byIdempotencyKey(idempotencyKey: string): Refund | undefined;
  /** Every refund, or those of one charge, oldest first. */
  list(filter?: { chargeId?: string }): Refund[];
}

export function createRefundStore(deps: { clock: BooksClock }): RefundStore {
  // Insertion order is creation order, so "oldest first" needs no sorting.
  const refunds: Refund[] = [];
  const newestByKey = new Map<string, Refund>();

  return {
    insert(draft) {
      const refund: Refund = { ...draft, createdAt: new Date(deps.clock.nowMs()).toISOString() };
      refunds.push(refund);
      newestByKey.set(refund.idempotencyKey, refund);
      return { ...refund };
    },
    byIdempotencyKey(idempotencyKey) {
      const refund = newestByKey.get(idempotencyKey);
      return refund === undefined ? undefined : { ...refund };
    },
    list(filter) {
      const chargeId = filter?.chargeId;
      return refunds
        .filter((refund) => chargeId === undefined || refund.chargeId === chargeId)
        .map((refund) => ({ ...refund }));
    },
  };
}
