/**
 * The low-water mark of unfinished requests (migrations/0027, ADR 0062): every unfinished request
 * has an id at or above idempotency_low_water.low_water, or is in idempotency_parked. The
 * recovery sweep moves the mark up, in one transaction, with these statements in this order.
 */

/**
 * The first id the sequence has not handed out. The transaction's first statement, before it
 * has an xid: every id below this position was handed out to a transaction whose xid was
 * assigned before it (idempotency_next_request_id), and so before this transaction's own.
 */
export const SEQUENCE_POSITION = `
SELECT (CASE WHEN is_called THEN last_value + 1 ELSE last_value END)::text AS next_id
  FROM idempotency_request_id_seq`;

/**
 * The mark, locked (which gives this transaction its xid), or no row when another process's
 * sweep holds it (that one moves it). next_after is the xid of the sweep that read
 * next_low_water (MOVE_LOW_WATER). That sweep has ended, so the snapshot's xmax is past it, and
 * every transaction below it still running is in the snapshot's list: xmin is at or past it only
 * once all of them have ended. `ready` then says that every id below next_low_water belongs to a
 * committed row or to none, and this transaction's later statements see them all.
 *
 * Two more cases. A next_after at or past xmax cannot be this server's: the database was
 * restored into another (with lower xids), none of whose transactions can hold an old id. And a
 * sequence with a cache hands ids out of per-session blocks, not in the order they are asked
 * for, so with one the mark never moves (the migration made it CACHE 1).
 */
export const LOCK_LOW_WATER = `
SELECT m.low_water::text AS low_water, m.next_low_water::text AS next_low_water,
       (pg_snapshot_xmin(s.snapshot) >= m.next_after OR m.next_after >= pg_snapshot_xmax(s.snapshot))
       AND (SELECT seqcache FROM pg_sequence
             WHERE seqrelid = 'idempotency_request_id_seq'::regclass) = 1 AS ready
  FROM idempotency_low_water m, (SELECT pg_current_snapshot() AS snapshot) s
   FOR UPDATE OF m SKIP LOCKED`;

/**
 * Parks the unfinished requests the mark is about to pass. $1 the mark, $2 the next mark. Reads
 * the primary keys from $1, where the rows admitted since the last move are.
 */
export const PARK_PASSED = `
INSERT INTO idempotency_parked (request_id)
SELECT id FROM idempotency_keys
 WHERE id >= $1::bigint AND id < $2::bigint AND state <> 'finished'
    ON CONFLICT ON CONSTRAINT idempotency_parked_pk DO NOTHING`;

/** Part of the way to the next mark, which stays: $1 the new mark. */
export const RAISE_LOW_WATER = `
UPDATE idempotency_low_water SET low_water = $1::bigint`;

/**
 * $1 the new mark, $2 the next one (SEQUENCE_POSITION, read before this transaction had its
 * xid), and that xid, for a later sweep to wait for.
 */
export const MOVE_LOW_WATER = `
UPDATE idempotency_low_water
   SET low_water = $1::bigint, next_low_water = $2::bigint, next_after = pg_current_xact_id()`;

/**
 * Parked requests that have finished since, or whose rows are gone, leave the list. A finished
 * request never becomes unfinished again, and a moved one (retention) keeps its id.
 */
export const UNPARK_FINISHED = `
DELETE FROM idempotency_parked p
 WHERE NOT EXISTS (SELECT FROM idempotency_keys k
                    WHERE k.id = p.request_id AND k.state <> 'finished')`;
