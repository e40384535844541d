import { v7 } from 'uuid';

/**
 * A new id for a row that many indexes key on: a UUIDv7 (RFC 9562), its first 48 bits the
 * time in milliseconds and the rest random.
 *
 * Why not a random (v4) id: a payment's id is the tail of the keys of its events, ledger
 * postings, inbox messages and receipts. Random ids scatter each insert onto a
 * different leaf page of every one of those indexes, and the first change to a page after a
 * checkpoint writes the whole page to the WAL. Ids that grow with time keep inserts on the
 * right-hand pages, so one page image serves many payments (ADR 0035).
 *
 * The time it reveals is the payment's `createdAt`, which the API shows anyway; the 73 random
 * bits keep ids unguessable, and every lookup is scoped by tenant besides.
 */
export function timeOrderedId(): string {
  // uuid draws its own random bytes here, one CSPRNG call an id. Given bytes from our pool
  // (public-random.ts), `v7({ random })` would drop the counter that keeps ids made in one
  // millisecond in the order they were made (time-ordered-id.test.ts, ADR 0065).
  return v7();
}
