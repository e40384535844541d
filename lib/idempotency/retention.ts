import type pg from 'pg';
import { SET_MAINTENANCE_STATEMENT_TIMEOUT, withTransaction, type TxClient } from '../db/pool.ts';
import {
  HOLDS_UNFINISHED,
  LOCK_REGISTERED_PARTITION,
  MOVE_UNFINISHED_KEYS,
  MOVE_UNFINISHED_PHASE_LOG,
  PARTITIONED_TABLES,
  REGISTER_PARTITION,
  SELECT_EXPIRED_PARTITIONS,
  SELECT_NOW,
  SELECT_PARTITION_TAILS,
  SET_DDL_LOCK_TIMEOUT,
  TRY_RETENTION_LOCK,
  UNREGISTER_PARTITION,
  createPartition,
  dropPartition,
  lockPartition,
  type PartitionedTable,
} from './retention.sql.ts';

export interface RetentionPolicy {
  /** The replay window: a stored answer is kept until its key's expires_at. */
  ttlSeconds: number;
  /** How long a key's metadata outlives its window (for diagnostics and expired-retry counts). */
  metadataRetentionSeconds: number;
  /** The width of one partition; a partition is dropped whole once all of it is past retention. */
  partitionSeconds: number;
}

/**
 * The gateway's defaults, which each setting's environment variable overrides: a 24 h replay
 * window (as long as the longest client retry window we promise), metadata kept a week longer
 * (enough to explain a late retry), one partition per day (a handful per table).
 */
export const DEFAULT_RETENTION_POLICY: Readonly<RetentionPolicy> = {
  ttlSeconds: 86_400,
  metadataRetentionSeconds: 7 * 86_400,
  partitionSeconds: 86_400,
};

/**
 * How long admissions can go on with no maintenance at all: partitions are kept ready this far
 * beyond the furthest expires_at a new row can get (now + ttl). When a stalled job lets it run
 * out, every admission fails for want of a partition (and so does finishing a request, whose
 * expiry moves to now + ttl); IdempotencyPartitionsRunningOut pages with half of it left.
 *
 * A day, in whole partitions, but never more than MAX_PARTITIONS_AHEAD of them: admission's
 * lookup by key opens every partition, and a replay's every one whose window is open, each
 * costing PostgreSQL CPU on every request (docs/decisions/0004-time-partitioned-retention.md,
 * 0052-an-owner-names-its-rows-partition.md). So with the default daily partitions it is one partition; with hourly
 * ones three hours, and with the narrowest (a minute) three minutes. A day of minute partitions
 * would be 1,440 per table: made in one transaction they exhaust PostgreSQL's lock table, and
 * every lookup would open them all.
 */
const TARGET_SLACK_SECONDS = 86_400;
const MAX_PARTITIONS_AHEAD = 3;

/** The slack maintenance keeps under `policy`: TARGET_SLACK_SECONDS in whole partitions, bounded. */
export function partitionSlackSeconds(policy: RetentionPolicy): number {
  const partitions = Math.ceil(TARGET_SLACK_SECONDS / policy.partitionSeconds);
  return Math.min(MAX_PARTITIONS_AHEAD, Math.max(1, partitions)) * policy.partitionSeconds;
}

export interface RetentionRun {
  result: 'done' | 'skipped';
  created: string[];
  dropped: string[];
  /** Unfinished requests moved out of a dropped partition (they are never dropped). */
  movedUnfinished: number;
  /** Partitions past retention kept for a later run: a live owner holds a row in them. */
  kept: string[];
}

/**
 * One run of partition maintenance: creates partitions ahead, drops those past retention.
 * Safe from any number of processes at once: each step holds a transaction-scoped advisory
 * lock, and a process that cannot get it skips the run (another one is doing the work). A drop
 * that cannot get its table lock within a moment gives up and is retried on the next run.
 */
export async function maintainPartitions(
  pool: pg.Pool,
  policy: RetentionPolicy,
): Promise<RetentionRun> {
  const run: RetentionRun = {
    result: 'done',
    created: [],
    dropped: [],
    movedUnfinished: 0,
    kept: [],
  };
  const created = await exclusively(pool, (tx) => createAhead(tx, policy));
  if (created === null) return { ...run, result: 'skipped' };
  run.created = created;
  const { rows: expired } = await pool.query<{ name: string; parent: PartitionedTable }>(
    SELECT_EXPIRED_PARTITIONS,
    [policy.metadataRetentionSeconds],
  );
  for (const partition of expired) {
    const moved = await exclusively(pool, async (tx) => {
      await tx.query(SET_DDL_LOCK_TIMEOUT);
      const still = await tx.query(LOCK_REGISTERED_PARTITION, [partition.name]);
      if (still.rowCount !== 1) return { outcome: 'gone' as const, moved: 0 };
      await tx.query(lockPartition(partition.name));
      let count = 0;
      if (partition.parent === 'idempotency_keys') {
        const { rows } = await tx.query<{ moved: number }>(MOVE_UNFINISHED_KEYS, [
          partition.name,
          policy.ttlSeconds,
        ]);
        count = rows[0]?.moved ?? 0;
      } else if (partition.parent === 'idempotency_phase_log') {
        await tx.query(MOVE_UNFINISHED_PHASE_LOG, [partition.name]);
      }
      const { rows } = await tx.query<{ holds: boolean }>(HOLDS_UNFINISHED, [partition.name]);
      if (rows[0]?.holds === true) return { outcome: 'kept' as const, moved: count };
      await tx.query(dropPartition(partition.name));
      await tx.query(UNREGISTER_PARTITION, [partition.name]);
      return { outcome: 'dropped' as const, moved: count };
    });
    if (moved === null) return { ...run, result: 'skipped' };
    if (moved.outcome === 'dropped') run.dropped.push(partition.name);
    else if (moved.outcome === 'kept') run.kept.push(partition.name);
    run.movedUnfinished += moved.moved;
  }
  return run;
}

async function createAhead(tx: TxClient, policy: RetentionPolicy): Promise<string[]> {
  await tx.query(SET_DDL_LOCK_TIMEOUT);
  const { rows } = await tx.query<{ parent: PartitionedTable; upper_bound: Date }>(
    SELECT_PARTITION_TAILS,
  );
  const { rows: clock } = await tx.query<{ now: Date }>(SELECT_NOW);
  const now = clock[0]!.now.getTime();
  const widthMs = policy.partitionSeconds * 1000;
  const horizon = now + (policy.ttlSeconds + partitionSlackSeconds(policy)) * 1000;
  const created: string[] = [];
  for (const parent of PARTITIONED_TABLES) {
    const tail = rows.find((row) => row.parent === parent);
    // A table with no partition at all (not reachable after migration 0007): start at now.
    let lower =
      tail === undefined ? Math.floor(now / widthMs) * widthMs : tail.upper_bound.getTime();
    while (lower < horizon) {
      created.push(
        await addPartition(tx, {
          parent,
          lower: new Date(lower),
          upper: new Date(lower + widthMs),
        }),
      );
      lower += widthMs;
    }
  }
  return created;
}

/**
 * Until when a new key has a partition to land in: the earliest, over the partitioned tables, of
 * the newest partition's upper bound less the TTL (a key admitted later would expire beyond every
 * partition, and its insert would fail). A plain read, separate from maintenance, so that it can
 * be reported when maintenance fails (DDL refused, a drop timing out): that is when it matters.
 * The epoch when a table has no partition at all: nothing can be inserted.
 */
export async function insertableUntil(pool: pg.Pool, policy: RetentionPolicy): Promise<Date> {
  const { rows } = await pool.query<{ upper_bound: Date }>(SELECT_PARTITION_TAILS);
  if (rows.length < PARTITIONED_TABLES.length) return new Date(0);
  const reach = Math.min(...rows.map((row) => row.upper_bound.getTime()));
  return new Date(reach - policy.ttlSeconds * 1000);
}

/**
 * Creates and registers one partition (named after its lower bound unless told otherwise).
 * Callers outside the job (tests, benchmarks) lay out partitions with it too, so the registry
 * always matches what exists.
 */
export async function addPartition(
  tx: TxClient,
  partition: { parent: PartitionedTable; lower: Date; upper: Date; name?: string },
): Promise<string> {
  const name = partition.name ?? partitionName(partition.parent, partition.lower);
  await tx.query(createPartition({ ...partition, name }));
  await tx.query(REGISTER_PARTITION, [name, partition.parent, partition.lower, partition.upper]);
  return name;
}

/** `idempotency_keys_p20261201t000000`: the partition's lower bound in UTC. */
function partitionName(parent: PartitionedTable, lower: Date): string {
  const stamp = lower
    .toISOString()
    .replace(/\.\d{3}Z$/, '')
    .replace(/[-:]/g, '')
    .toLowerCase();
  return `${parent}_p${stamp}`;
}

/** Runs `work` holding the retention lock, or returns null if another process holds it. */
async function exclusively<T>(
  pool: pg.Pool,
  work: (tx: TxClient) => Promise<T>,
): Promise<T | null> {
  return withTransaction(pool, async (tx) => {
    // The pool's statement timeout is a request's; moving a partition's unfinished keys may
    // take longer, and a run cut short would retry (and be cut) on every schedule.
    await tx.query(SET_MAINTENANCE_STATEMENT_TIMEOUT);
    const { rows } = await tx.query<{ locked: boolean }>(TRY_RETENTION_LOCK);
    if (rows[0]?.locked !== true) return null;
    return work(tx);
  });
}
