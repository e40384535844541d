/**
 * The low-water mark of unfinished requests (migrations/0027, ADR 0062): every unfinished request
 * has an id at or above idempotency_low_water.low_water, or is in idempotency_parked. The
 * recovery sweep moves the mark up, in one transaction, with these statements in this order.
 */

/**
 * The mark, locked, or no row when another process's sweep holds it (that one moves it). `ready`:
 * every transaction with an xid below next_after has ended. Ids come after their transaction's
 * xid (idempotency_next_request_id), and next_low_water was read from the sequence before
 * next_after was seen assigned, so every id below next_low_water now belongs to a committed row
 * or to none, and this transaction's later statements see them all.
 */
export const LOCK_LOW_WATER = `
SELECT low_water::text AS low_water, next_low_water::text AS next_low_water,
       pg_snapshot_xmin(pg_current_snapshot()) >= next_after AS ready
  FROM idempotency_low_water
   FOR UPDATE SKIP LOCKED`;

/**
 * Parks the unfinished requests the mark is about to pass. $1 the mark, $2 the next mark. Reads
 * the primary keys from $1, where the rows admitted since the last move are.
 */
export const PARK_PASSED = `
INSERT INTO idempotency_parked (request_id)
SELECT id FROM idempotency_keys
 WHERE id >= $1::bigint AND id < $2::bigint AND state <> 'finished'
    ON CONFLICT ON CONSTRAINT idempotency_parked_pk DO NOTHING`;

/**
 * The first id the sequence has not handed out. Its own statement: MOVE_LOW_WATER's snapshot,
 * taken after this one ended, then names an xid assigned after every id below it was.
 */
export const SEQUENCE_POSITION = `
SELECT (CASE WHEN is_called THEN last_value + 1 ELSE last_value END)::text AS next_id
  FROM idempotency_request_id_seq`;

/** Part of the way to the next mark, which stays: $1 the new mark. */
export const RAISE_LOW_WATER = `
UPDATE idempotency_low_water SET low_water = $1::bigint`;

/** $1 the new mark, $2 the next one (SEQUENCE_POSITION). */
export const MOVE_LOW_WATER = `
UPDATE idempotency_low_water
   SET low_water = $1::bigint, next_low_water = $2::bigint,
       next_after = pg_snapshot_xmax(pg_current_snapshot())`;

/**
 * Parked requests that have finished since, or whose rows are gone, leave the list. A finished
 * request never becomes unfinished again, and a moved one (retention) keeps its id.
 */
export const UNPARK_FINISHED = `
DELETE FROM idempotency_parked p
 WHERE NOT EXISTS (SELECT FROM idempotency_keys k
                    WHERE k.id = p.request_id AND k.state <> 'finished')`;
