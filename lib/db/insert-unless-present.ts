import type pg from 'pg';
import { sqlState } from './sql-state.ts';

const UNIQUE_VIOLATION = '23505';

/**
 * One idempotent INSERT in two spellings: `probing` skips the rows already present by a NOT
 * EXISTS probe of the unique key, and `racing` is the same insert with ON CONFLICT DO NOTHING.
 *
 * Why not ON CONFLICT alone: it inserts each row speculatively and then confirms it, and the
 * confirmation is a WAL record of its own (48 bytes a row), on every row, although a conflict
 * is the rare case: a redelivered event's effect, once per crash or lapsed lease (ADR 0066).
 *
 * What the probe cannot see fails `probing` with a unique violation of that key: a copy another
 * transaction inserted and had not committed when the statement began (the insert waits for it,
 * and fails once it commits), one committed after the statement's snapshot was taken, or two
 * copies of a row in one call. Only then is `racing` run, in a statement of its own, whose
 * ON CONFLICT skips those rows as it would have from the start. So the outcome is ON CONFLICT's
 * in every case, and the caller sees no error for a race it could not have avoided.
 *
 * A pool, so each is an autocommit statement: inside a transaction the failed statement would
 * have aborted it, and `racing` could not run. `constraint` names the unique key both spellings
 * skip on; a violation of any other is the caller's error and is thrown.
 */
export async function insertUnlessPresent<R extends pg.QueryResultRow>(
  db: pg.Pool,
  insert: { probing: string; racing: string; constraint: string },
  values: unknown[],
): Promise<pg.QueryResult<R>> {
  try {
    return await db.query<R>(insert.probing, values);
  } catch (error) {
    const constraint = (error as { constraint?: unknown }).constraint;
    if (sqlState(error) !== UNIQUE_VIOLATION || constraint !== insert.constraint) throw error;
    return db.query<R>(insert.racing, values);
  }
}
