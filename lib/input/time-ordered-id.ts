import { v7 } from 'uuid';
import { publicRandomBytes } from '../crypto/public-random.ts';

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
  // With its random bits given, uuid draws none of its own: they come from the pool, one CSPRNG
  // call for hundreds of ids (ADR 0065). uuid then takes the sequence within a millisecond from
  // them too, so ids of one millisecond are unordered among themselves, which changes nothing
  // for the index pages above.
  return v7({ random: publicRandomBytes(16) });
}
