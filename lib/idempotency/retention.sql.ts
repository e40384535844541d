import pg from 'pg';

/**
 * The retention job's statements. Partition DDL cannot take parameters, so those statements are
 * built here from names and bounds this module computed itself, quoted all the same.
 */

/** Any fixed bigint: only one process maintains the partitions at a time; the others skip. */
export const RETENTION_LOCK_ID = 0x70_67_77_72; // "pgwr"

export const TRY_RETENTION_LOCK = `SELECT pg_try_advisory_xact_lock(${RETENTION_LOCK_ID}) AS locked`;

/**
 * Creating a partition and dropping one both take ACCESS EXCLUSIVE on the parent table, and
 * every later query on that table queues behind the waiting DDL. Behind a long transaction (a
 * report, pg_dump) that would stop all traffic for as long as it lasts; so the DDL waits at
 * most this long, fails, and is tried again on the next run, within the slack it keeps.
 */
export const SET_DDL_LOCK_TIMEOUT = `SET LOCAL lock_timeout = '2s'`;

export const PARTITIONED_TABLES = [
  'idempotency_keys',
  'idempotency_phase_log',
  'idempotency_responses',
] as const;
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

/** The newest partition of every table, and the database's clock. */
export const SELECT_PARTITION_TAILS = `
SELECT parent, max(upper_bound) AS upper_bound
  FROM idempotency_partitions
 GROUP BY parent`;

export const SELECT_NOW = `SELECT now() AS now`;

/**
 * Partitions whose every row is past its retention: responses once their window is over,
 * metadata (keys, phase log) once the metadata retention after that is over too.
 * $1 metadata retention seconds.
 */
export const SELECT_EXPIRED_PARTITIONS = `
SELECT name, parent, lower_bound, upper_bound
  FROM idempotency_partitions
 WHERE upper_bound <= now() - CASE WHEN parent = 'idempotency_responses' THEN interval '0'
                                   ELSE make_interval(secs => $1) END
 ORDER BY upper_bound,
          -- keys first: moving an unfinished request also decides where its phase log goes
          array_position(ARRAY['idempotency_keys', 'idempotency_phase_log', 'idempotency_responses'], parent)`;

export function createPartition(p: {
  name: string;
  parent: PartitionedTable;
  lower: Date;
  upper: Date;
}): string {
  return `CREATE TABLE ${pg.escapeIdentifier(p.name)} PARTITION OF ${pg.escapeIdentifier(p.parent)}
  FOR VALUES FROM (${pg.escapeLiteral(p.lower.toISOString())}) TO (${pg.escapeLiteral(p.upper.toISOString())})`;
}

/** $1 name, $2 parent, $3 lower bound, $4 upper bound. */
export const REGISTER_PARTITION = `
INSERT INTO idempotency_partitions (name, parent, lower_bound, upper_bound) VALUES ($1, $2, $3, $4)`;

/**
 * Moves every unfinished request no one holds out of a keys partition about to be dropped: its
 * window is renewed from now, so it lands in a live partition. An unfinished request is never
 * forgotten, however old. Only unfinished rows are read (idempotency_unfinished_keys,
 * migrations/0027), so the cost does not grow with the partition. Its phase log follows when
 * the log's own partition goes (MOVE_UNFINISHED_PHASE_LOG; keys partitions are handled first).
 *
 * A row under a live lease stays: its owner names the row by its partition key
 * (idempotency.sql.ts, ownersRow), and a moved row would fail the owner's next phase as if it
 * had been taken over. The partition then stays too (HOLDS_UNFINISHED) until a later run finds
 * the lease finished or run out. $1 partition name, $2 ttl seconds.
 */
export const MOVE_UNFINISHED_KEYS = `
WITH bounds AS (
  SELECT lower_bound, upper_bound FROM idempotency_partitions WHERE name = $1
), moved AS (
  UPDATE idempotency_keys k
     SET expires_at = now() + make_interval(secs => $2), updated_at = now()
    FROM bounds b, idempotency_unfinished_keys u
   WHERE k.id = u.id AND k.expires_at = u.expires_at
     AND k.state <> 'finished' AND k.expires_at >= b.lower_bound AND k.expires_at < b.upper_bound
     AND (k.lease_expires_at IS NULL OR k.lease_expires_at <= now())
  RETURNING k.id
)
SELECT count(*)::int AS moved FROM moved`;

/**
 * Phase-log rows of unfinished requests in a phase-log partition about to be dropped follow
 * their request to its current partition. $1 partition name.
 */
export const MOVE_UNFINISHED_PHASE_LOG = `
WITH bounds AS (
  SELECT lower_bound, upper_bound FROM idempotency_partitions WHERE name = $1
)
UPDATE idempotency_phase_log l
   SET expires_at = k.expires_at
  FROM idempotency_unfinished_keys k, bounds b
 WHERE l.request_id = k.id
   AND l.expires_at >= b.lower_bound AND l.expires_at < b.upper_bound`;

/**
 * Whether a partition about to be dropped still holds something of an unfinished request
 * after the moves: a key under a live lease, or a phase-log row of one. Such a partition is
 * kept for a later run. $1 partition name.
 */
export const HOLDS_UNFINISHED = `
WITH bounds AS (
  SELECT parent, lower_bound, upper_bound FROM idempotency_partitions WHERE name = $1
)
SELECT EXISTS (
         SELECT 1 FROM idempotency_unfinished_keys k, bounds b
          WHERE b.parent = 'idempotency_keys'
            AND k.expires_at >= b.lower_bound AND k.expires_at < b.upper_bound)
    OR EXISTS (
         SELECT 1 FROM idempotency_unfinished_keys k
           JOIN idempotency_phase_log l ON l.request_id = k.id, bounds b
          WHERE b.parent = 'idempotency_phase_log'
            AND l.expires_at >= b.lower_bound AND l.expires_at < b.upper_bound) AS holds`;

/**
 * Taken before anything in a partition is moved, so that between the moves and the drop no
 * request can claim, or be admitted into, one of its rows.
 */
export function lockPartition(name: string): string {
  return `LOCK TABLE ${pg.escapeIdentifier(name)} IN ACCESS EXCLUSIVE MODE`;
}

export function dropPartition(name: string): string {
  return `DROP TABLE ${pg.escapeIdentifier(name)}`;
}

/**
 * Whether a partition is still there to drop: another process may have dropped it between our
 * listing and our lock. $1 name.
 */
export const LOCK_REGISTERED_PARTITION = `
SELECT 1 FROM idempotency_partitions WHERE name = $1 FOR UPDATE`;

/** $1 name. */
export const UNREGISTER_PARTITION = `DELETE FROM idempotency_partitions WHERE name = $1`;
