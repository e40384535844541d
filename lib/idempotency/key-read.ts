import type pg from 'pg';
import { readBackDurably } from '../db/durable-read-back.ts';
import { SELECT_KEY, SELECT_LIVE_KEY } from './idempotency.sql.ts';
import { scopeIdsOf } from './operation.ts';
import type { KeyRow, Scope } from './types.ts';

/**
 * A scope's newest generation, as admission reads it. A key that is `likelyLive` (one this
 * process has met, or one that changed under an admission) is looked for among the partitions
 * of open windows first (SELECT_LIVE_KEY), and only when none is there among all of them; a key
 * most likely new is looked for in all of them at once, which answers "none" in one round trip.
 * Either way the answer is SELECT_KEY's: only the cost differs.
 */
export async function readKey(
  pool: pg.Pool,
  scope: Scope,
  options: { likelyLive: boolean } = { likelyLive: false },
): Promise<KeyRow | undefined> {
  const values = [scope.tenantId, scopeIdsOf(scope.operation), scope.key];
  if (options.likelyLive) {
    const { rows } = await pool.query<KeyRow>(SELECT_LIVE_KEY, values);
    if (rows[0] !== undefined) return rows[0];
  }
  const { rows } = await pool.query<KeyRow>(SELECT_KEY, values);
  return rows[0];
}

/**
 * The scope's newest generation, proven replicated: SELECT_KEY and a fence in one round trip, so
 * that a row comes back only from a server whose standby holds it (durable-read-back.ts). Read
 * after an admission's commit was lost, and before a final answer from a row read without that
 * proof. Fails with CommitUnconfirmedError when it cannot be proven.
 */
export async function readKeyDurably(pool: pg.Pool, scope: Scope): Promise<KeyRow | undefined> {
  const rows = await readBackDurably<KeyRow>(pool, {
    text: SELECT_KEY,
    values: [scope.tenantId, scopeIdsOf(scope.operation), scope.key],
  });
  const row = rows[0];
  // The fence's commit came after the read and waited for the standbys: they hold what it saw.
  return row === undefined ? undefined : { ...row, durable_as_read: true };
}
