/**
 * The partitions a week of traffic leaves, for `bench:growth`. A key's metadata outlives its
 * replay window by metadataRetentionSeconds, and the retention job drops a partition only once
 * all of it is past that: a database that has served a week holds a daily partition of
 * idempotency_keys and of idempotency_phase_log for each day of it, where a fresh one holds the
 * migration's single partition from -infinity. A lookup that cannot name its partition opens
 * every one of them (ADR 0052), so a preload that left the keys in one partition would measure
 * the first day's cost, not a month's.
 *
 * The migration's `_initial` partition of those two tables, still empty, is replaced by daily
 * partitions from the oldest day retention keeps to its upper bound, registered as the
 * retention job registers its own. Answers are kept only for their window, so
 * idempotency_responses keeps its one partition.
 */
import type pg from 'pg';
import { withTransaction } from '../../lib/db/pool.ts';
import { DEFAULT_RETENTION_POLICY, addPartition } from '../../lib/idempotency/retention.ts';
import {
  RETENTION_LOCK_ID,
  UNREGISTER_PARTITION,
  dropPartition,
} from '../../lib/idempotency/retention.sql.ts';

const DAY_MS = 86_400_000;
const WITH_METADATA = ['idempotency_keys', 'idempotency_phase_log'] as const;

/**
 * Lays the days out; returns the lower bound of the oldest, where the loaded metadata begins.
 * A database already laid out (no empty `_initial` partition) is left as it is.
 */
export async function layOutMetadataDays(pool: pg.Pool): Promise<Date> {
  const { rows: now } = await pool.query<{ now: Date }>('SELECT now() AS now');
  const retentionMs = DEFAULT_RETENTION_POLICY.metadataRetentionSeconds * 1000;
  const oldest = new Date(Math.floor((now[0]!.now.getTime() - retentionMs) / DAY_MS) * DAY_MS);
  await withTransaction(pool, async (tx) => {
    // The gateway's own retention job skips its run while this holds the lock.
    await tx.query(`SELECT pg_advisory_xact_lock(${RETENTION_LOCK_ID})`);
    for (const parent of WITH_METADATA) {
      const name = `${parent}_initial`;
      const { rows } = await tx.query<{ upper_bound: Date; empty: boolean }>(
        `SELECT upper_bound, NOT EXISTS (SELECT 1 FROM ${parent}) AS empty
           FROM idempotency_partitions WHERE name = $1`,
        [name],
      );
      const initial = rows[0];
      if (initial === undefined || !initial.empty) continue;
      await tx.query(dropPartition(name));
      await tx.query(UNREGISTER_PARTITION, [name]);
      for (let day = oldest.getTime(); day < initial.upper_bound.getTime(); day += DAY_MS) {
        const upper = Math.min(day + DAY_MS, initial.upper_bound.getTime());
        await addPartition(tx, { parent, lower: new Date(day), upper: new Date(upper) });
      }
    }
  });
  return oldest;
}
