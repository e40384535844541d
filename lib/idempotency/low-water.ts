import type pg from 'pg';
import { withTransaction, type TxClient } from '../db/pool.ts';
import {
  LOCK_LOW_WATER,
  MOVE_LOW_WATER,
  PARK_PASSED,
  RAISE_LOW_WATER,
  SEQUENCE_POSITION,
  UNPARK_FINISHED,
} from './low-water.sql.ts';

/**
 * The most ids one move passes. A mark held back for long (no sweep ran, a transaction stayed
 * open) catches up over several sweeps, each reading a bounded range, rather than in one
 * statement over everything admitted since, which could outlast its statement timeout every time.
 */
export const LOW_WATER_MAX_STEP = 50_000n;

/**
 * Moves the low-water mark of unfinished requests as far as is safe (low-water.sql.ts), parking
 * every unfinished request it passes, and lets finished parked ones go. Returns the mark after,
 * or null when another process's sweep holds it. A move goes where the one before it read the
 * sequence, so the mark trails the sequence by two sweeps' admissions or so: the readers of
 * unfinished requests (idempotency_unfinished_keys) read those rows and the parked ones, not the
 * whole table. A mark that cannot move (a transaction that stays open anywhere on the server, a
 * sweep that fails) costs those readers more rows, never a request: the rows it has not passed
 * are still read.
 */
export async function moveLowWater(
  pool: pg.Pool,
  opts: { maxStep?: bigint } = {},
): Promise<string | null> {
  const maxStep = opts.maxStep ?? LOW_WATER_MAX_STEP;
  return withTransaction(pool, moveMark(maxStep), { first: [READ_COMMITTED] });
}

/** Each statement its own snapshot: PARK_PASSED must see what LOCK_LOW_WATER found ended. */
const READ_COMMITTED = { text: 'SET TRANSACTION ISOLATION LEVEL READ COMMITTED', values: [] };

function moveMark(maxStep: bigint) {
  return async (tx: TxClient): Promise<string | null> => {
    // First, before the lock gives this transaction its xid (low-water.sql.ts).
    const position = await tx.query<{ next_id: string }>(SEQUENCE_POSITION);
    const { rows } = await tx.query<{ low_water: string; next_low_water: string; ready: boolean }>(
      LOCK_LOW_WATER,
    );
    const mark = rows[0];
    if (mark === undefined) return null;
    await tx.query(UNPARK_FINISHED);
    if (!mark.ready) return mark.low_water;
    const next = BigInt(mark.next_low_water);
    const stepEnd = BigInt(mark.low_water) + maxStep;
    const target = stepEnd < next ? stepEnd : next;
    await tx.query(PARK_PASSED, [mark.low_water, target.toString()]);
    if (target < next) {
      // Still short of the next mark, which stays as it is: ready, for the next move.
      await tx.query(RAISE_LOW_WATER, [target.toString()]);
      return target.toString();
    }
    await tx.query(MOVE_LOW_WATER, [mark.next_low_water, position.rows[0]!.next_id]);
    return mark.next_low_water;
  };
}
