// In-memory record of applied captures and voids, so that each can be looked up by the key it
// was applied under, as refunds can: a caller that lost an answer asks before it sends again.
// As with charges, callers only ever receive copies, and createdAt comes from the books clock.
import { randomBytes } from 'node:crypto';
import type { BooksClock } from './books-clock.ts';
import type { Settlement, SettlementKind } from './operation-types.ts';

/** Random bytes in a capture or void id: 96 bits, like charge ids. */
const SETTLEMENT_ID_RANDOM_BYTES = 12;
const ID_PREFIX: Readonly<Record<SettlementKind, string>> = { capture: 'cap', void: 'vo' };

export interface SettlementStore {
  /** Records an applied capture (with the amount captured) or void, and returns a copy. */
  record(draft: {
    kind: SettlementKind;
    chargeId: string;
    amount: string | null;
    idempotencyKey: string;
  }): Settlement;
  /** The newest capture or void of this kind made under the key. */
  byIdempotencyKey(kind: SettlementKind, idempotencyKey: string): Settlement | undefined;
}

export function createSettlementStore(deps: { clock: BooksClock }): SettlementStore {
  const newest = new Map<string, Settlement>();
  const slot = (kind: SettlementKind, key: string) => `${kind}\u0000${key}`;
  return {
    record(draft) {
      const id = `${ID_PREFIX[draft.kind]}_${randomBytes(SETTLEMENT_ID_RANDOM_BYTES).toString('hex')}`;
      const createdAt = new Date(deps.clock.nowMs()).toISOString();
      const settlement: Settlement = { id, ...draft, createdAt };
      newest.set(slot(draft.kind, draft.idempotencyKey), settlement);
      return { ...settlement };
    },
    byIdempotencyKey(kind, idempotencyKey) {
      const settlement = newest.get(slot(kind, idempotencyKey));
      return settlement === undefined ? undefined : { ...settlement };
    },
  };
}
