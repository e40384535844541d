/**
 * The event log as the ledger and receipts read it (migrations/0016): a cursor per consumer over
 * outbox_events, in the order of the writing transaction's id, read only below the oldest
 * transaction still running. Below that bound every writer has committed or aborted, so no event
 * can appear later behind the cursor: reading in commit order instead would skip an event whose
 * transaction took its number early and committed late.
 */

/**
 * Takes a consumer's next batch: the log's next events after its cursor, and the cursor's lease
 * for the dispatcher that takes them. The batch is every log event in order, `mine` marking
 * those that name the consumer: a cursor walks past the others (the ledger's refunds, for
 * receipts) instead of scanning them again on every poll until one of its own comes. Nothing is
 * written when nothing is due (an idle gateway's polls are reads only). Two dispatchers racing
 * for the cursor: the loser's UPDATE waits for the winner's lease and finds it held, so it
 * returns no rows. $1 consumer, $2 lease ms, $3 batch size.
 */
export const CLAIM_LOG_BATCH = `
WITH cursor AS (
  SELECT written_by, log_seq FROM outbox_cursors WHERE consumer = $1 AND claimed_until <= now()
), due AS (
  SELECT e.tenant_id, e.id, e.type, e.payload, e.created_at, e.written_by, e.log_seq,
         $1 = ANY (e.log_consumers) AS mine
    FROM cursor c
   CROSS JOIN LATERAL (
         SELECT * FROM outbox_events e
          WHERE (e.written_by, e.log_seq) > (c.written_by, c.log_seq)
            AND e.written_by < pg_snapshot_xmin(pg_current_snapshot())
            AND e.log_consumers <> '{}'
          ORDER BY e.written_by, e.log_seq
          LIMIT $3) e
), claimed AS (
  UPDATE outbox_cursors
     SET claim = claim + 1, claimed_until = now() + make_interval(secs => $2::float8 / 1000)
   WHERE consumer = $1 AND claimed_until <= now() AND EXISTS (SELECT 1 FROM due)
  RETURNING claim
)
SELECT claimed.claim::text AS claim, due.tenant_id, due.id, due.type, due.payload, due.created_at,
       due.written_by::text AS written_by, due.log_seq::text AS log_seq, due.mine
  FROM claimed CROSS JOIN due
 ORDER BY due.written_by, due.log_seq`;

/**
 * Moves a consumer's cursor past the batch it took, and turns the batch's events the consumer
 * did not take into delivery rows, the retry queue (pending with a backoff, or abandoned), in one
 * statement: a cursor never passes an event that is neither taken nor queued. An advance under a
 * claim that another dispatcher has since taken over (the lease ran out) moves nothing; the
 * other dispatcher takes the same events again, under the same identities.
 * $1 consumer, $2 claim, $3 written_by, $4 log_seq; the failures, position by position:
 * $5 tenants, $6 event ids, $7 statuses ('pending' | 'abandoned'), $8 errors; $9 backoff ms.
 */
export const ADVANCE_LOG_CURSOR = `
WITH failed AS (
  INSERT INTO outbox_deliveries
         (tenant_id, event_id, consumer, status, attempts, next_attempt_at, last_error)
  SELECT f.tenant_id, f.event_id, $1, f.status, 1,
         now() + make_interval(secs => $9::float8 / 1000), f.error
    FROM unnest($5::uuid[], $6::text[], $7::text[], $8::text[]) AS f(tenant_id, event_id, status, error)
  ON CONFLICT ON CONSTRAINT outbox_deliveries_pk DO NOTHING
)
UPDATE outbox_cursors
   SET written_by = $3::xid8, log_seq = $4::bigint, claimed_until = '-infinity'
 WHERE consumer = $1 AND claim = $2::bigint`;

/**
 * What each log consumer has yet to take, for the backlog gauges: the events after its cursor,
 * held-back ones included, and the age of the oldest.
 */
export const LOG_BACKLOG = `
SELECT c.consumer, count(e.id)::int AS pending,
       COALESCE(EXTRACT(EPOCH FROM now() - min(e.created_at)), 0)::float8 AS oldest_age_seconds
  FROM outbox_cursors c
  LEFT JOIN outbox_events e
    ON (e.written_by, e.log_seq) > (c.written_by, c.log_seq)
   AND e.log_consumers <> '{}' AND c.consumer = ANY (e.log_consumers)
 GROUP BY c.consumer`;
