// In-memory record of applied charges. Callers only ever receive copies: a test holding a
// Charge must not be able to rewrite the provider's books, and later mutations (capture,
// refund, void) must not retroactively change a snapshot someone already received.
import type { Charge } from './charge-types.ts';

export interface ChargeStore {
  /** Records a newly applied charge; a second charge for the same key is a bug, so it throws. */
  insert(charge: Charge): void;
  /** Applies a change to an existing charge (for future capture/refund/void endpoints). */
  update(id: string, change: (current: Charge) => Charge): Charge;
  byId(id: string): Charge | undefined;
  byIdempotencyKey(idempotencyKey: string): Charge | undefined;
  /** Every charge, or those for one reference, oldest first. */
  list(filter?: { reference?: string }): Charge[];
}

export function createChargeStore(): ChargeStore {
  // Map iteration order is insertion order, which is creation order: "oldest first" for free.
  const chargesById = new Map<string, Charge>();
  const idByKey = new Map<string, string>();

  const copy = (charge: Charge | undefined): Charge | undefined =>
    charge === undefined ? undefined : { ...charge };

  return {
    insert(charge) {
      if (idByKey.has(charge.idempotencyKey) || chargesById.has(charge.id)) {
        throw new Error(`duplicate charge for idempotency key ${charge.idempotencyKey}`);
      }
      chargesById.set(charge.id, { ...charge });
      idByKey.set(charge.idempotencyKey, charge.id);
    },
    update(id, change) {
      const current = chargesById.get(id);
      if (current === undefined) throw new Error(`no charge ${id}`);
      const next = change({ ...current });
      // Identity fields are what replays and probes join on; letting them drift would orphan them.
      if (next.id !== id || next.idempotencyKey !== current.idempotencyKey) {
        throw new Error(`charge ${id} cannot change its id or idempotency key`);
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
  };
}
