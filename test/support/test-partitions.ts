import pg from 'pg';
import {
  DEFAULT_RETENTION_POLICY,
  addPartition,
  maintainPartitions,
} from '../../lib/idempotency/retention.ts';
import { PARTITIONED_TABLES, dropPartition } from '../../lib/idempotency/retention.sql.ts';

export const DAY_MS = 86_400_000;

/** The partitions a gateway with the default retention policy would have. */
export async function ensureTestPartitions(url: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    await maintainPartitions(pool, DEFAULT_RETENTION_POLICY);
  } finally {
    await pool.end();
  }
}

/** The database's clock, now. */
export async function dbNow(db: pg.Pool): Promise<number> {
  const { rows } = await db.query<{ now: Date }>('SELECT clock_timestamp() AS now');
  return rows[0]!.now.getTime();
}

/**
 * Replaces every partition of the three tables (which must hold no rows of interest) with
 * consecutive partitions between `bounds`, registered as the retention job registers its own.
 */
export async function layOutPartitions(db: pg.Pool, bounds: number[]): Promise<void> {
  await db.query('TRUNCATE idempotency_keys, idempotency_phase_log, idempotency_responses');
  const { rows } = await db.query<{ name: string }>('SELECT name FROM idempotency_partitions');
  for (const { name } of rows) await db.query(dropPartition(name));
  await db.query('DELETE FROM idempotency_partitions');
  for (const parent of PARTITIONED_TABLES) {
    for (let i = 0; i + 1 < bounds.length; i++) {
      const lower = new Date(bounds[i]!);
      const upper = new Date(bounds[i + 1]!);
      await addPartition(db, { name: `${parent}_t${i}`, parent, lower, upper });
    }
  }
}

/** Daily partitions from `fromDaysAgo` days ago until well past any new row's expiry. */
export async function dailyPartitionsSince(db: pg.Pool, fromDaysAgo: number): Promise<void> {
  const today = Math.floor((await dbNow(db)) / DAY_MS) * DAY_MS;
  const bounds: number[] = [];
  for (let day = -fromDaysAgo; day <= 3; day++) bounds.push(today + day * DAY_MS);
  await layOutPartitions(db, bounds);
}

export async function generationsOf(db: pg.Pool, key: string) {
  const { rows } = await db.query<{
    id: string;
    state: string;
    outcome: string | null;
    resource_id: string | null;
    expires_at: Date;
    partition: string;
    has_body: boolean;
  }>(
    `SELECT k.id, k.state, k.outcome, k.resource_id, k.expires_at, k.tableoid::regclass::text AS partition,
            EXISTS (SELECT 1 FROM idempotency_responses r WHERE r.request_id = k.id) AS has_body
       FROM idempotency_keys k WHERE k.key = $1 ORDER BY k.expires_at`,
    [key],
  );
  return rows;
}
