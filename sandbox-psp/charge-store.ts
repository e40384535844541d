// In-memory record of applied charges. Callers only ever receive copies: a test holding a
// Charge must not be able to rewrite the provider's books, and later mutations (capture,
// refund, void) must not retroactively change a snapshot someone already received.
// The store stamps createdAt itself, at insertion, from the books clock: a statement that
// declares a period complete can then never be contradicted by a charge recorded later.
import type { BooksClock } from './books-clock.ts';
import type { Charge, ChargeDraft } from './charge-types.ts';

export interface ChargeStore {
  /** Records a newly applied charge, stamped with the insertion time, and returns a copy of it.
   * A second charge for a key happens only once the ledger has forgotten the key (a retention). */
  insert(draft: ChargeDraft): Charge;
  /** Applies a change to an existing charge (capture, void, refund; see charge-operations.ts). */
  update(id: string, change: (current: Charge) => Charge): Charge;
  byId(id: string): Charge | undefined;
  /** The newest charge made under the key: the key's only one, unless it was forgotten. */
  byIdempotencyKey(idempotencyKey: string): Charge | undefined;
  /** Every charge, or those for one reference, oldest first. */
  list(filter?: { reference?: string }): Charge[];
  /** Charges recorded in [fromMs, toMs), oldest first. */
  createdBetween(range: { fromMs: number; toMs: number }): Charge[];
}

export function createChargeStore(deps: { clock: BooksClock }): ChargeStore {
  // Map iteration order is insertion order, which is creation order: "oldest first" for free
  // (the books clock never runs backwards, so createdAt agrees with it).
  const chargesById = new Map<string, Charge>();
  const idByKey = new Map<string, string>();

  const copy = (charge: Charge | undefined): Charge | undefined =>
    charge === undefined ? undefined : { ...charge };

  return {
    insert(draft) {
      if (chargesById.has(draft.id)) throw new Error(`duplicate charge id ${draft.id}`);
      const charge: Charge = { ...draft, createdAt: new Date(deps.clock.nowMs()).toISOString() };
      chargesById.set(charge.id, charge);
      idByKey.set(charge.idempotencyKey, charge.id);
      return { ...charge };
    },
    update(id, change) {
      const current = chargesById.get(id);
      if (current === undefined) throw new Error(`no charge ${id}`);
      const next = change({ ...current });
      // Identity fields are what replays and probes join on; letting them drift would orphan
      // them. createdAt is what statements cut on; letting it drift would rewrite closed books.
      if (
        next.id !== id ||
        next.idempotencyKey !== current.idempotencyKey ||
        next.createdAt !== current.createdAt
      ) {
        throw new Error(`charge ${id} cannot change its id, idempotency key or createdAt`);
      }
      chargesById.set(id, { ...next });
      return { ...next };
    },
    byId: (id) => copy(chargesById.get(id)),
    byIdempotencyKey(idempotencyKey) {
      const id = idByKey.get(idempotencyKey);
      return id === undefined ? undefined : copy(chargesById.get(id));
    },
    list(filter) {
      const all = [...chargesById.values()];
      const reference = filter?.reference;
      const selected = reference === undefined ? all : all.filter((c) => c.reference === reference);
      return selected.map((charge) => ({ ...charge }));
    },
    createdBetween({ fromMs, toMs }) {
      return [...chargesById.values()]
        .filter((charge) => {
          const createdMs = Date.parse(charge.createdAt);
          return createdMs >= fromMs && createdMs < toMs;
        })
        .map((charge) => ({ ...charge }));
    },
  };
}
