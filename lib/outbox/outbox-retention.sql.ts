/**
 * Retention of the outbox and the inbox, one bounded batch per statement (outbox-retention.ts).
 * Each statement commits on its own: a batch holds its rows' locks for one short statement, and
 * skips rows another transaction holds.
 */

/**
 * A batch of events past their window, with their deliveries. $1 retention seconds, $2 batch
 * size. An event goes only when
 * - it is older than the window (what a merchant may ask to be sent again, and what a
 *   webhook delivery's record shows),
 * - no delivery of it is pending (the retry queue, or a redelivery asked for), and
 * - every consumer that reads it from the log has taken it: its cursor is at or past it.
 * A delivery that turns pending after the batch chose its event (a redelivery at that moment)
 * is kept by the recheck of `status` on its delete, and the event's delete then fails its
 * foreign key: the batch rolls back whole and the next run leaves that event alone.
 */
export const PRUNE_EVENTS = `
WITH doomed AS (
  SELECT e.tenant_id, e.id
    FROM outbox_events e
   WHERE e.created_at < now() - make_interval(secs => $1::float8)
     AND NOT EXISTS (SELECT 1 FROM outbox_deliveries d
                      WHERE d.tenant_id = e.tenant_id AND d.event_id = e.id AND d.status = 'pending')
     AND NOT EXISTS (SELECT 1 FROM outbox_cursors c
                      WHERE c.consumer = ANY (e.log_consumers)
                        AND (e.written_by, e.log_seq) > (c.written_by, c.log_seq))
   LIMIT $2
     FOR UPDATE OF e SKIP LOCKED
), deliveries AS (
  DELETE FROM outbox_deliveries d
   USING doomed
   WHERE d.tenant_id = doomed.tenant_id AND d.event_id = doomed.id AND d.status <> 'pending'
  RETURNING 1
), events AS (
  DELETE FROM outbox_events e
   USING doomed
   WHERE e.tenant_id = doomed.tenant_id AND e.id = doomed.id
  RETURNING 1
)
SELECT (SELECT count(*) FROM events)::int AS events,
       (SELECT count(*) FROM deliveries)::int AS deliveries`;

/**
 * A batch of inbox rows past the window. $1 retention seconds, $2 batch size. The inbox keeps a
 * consumer from applying a message twice; a message past the window can no longer arrive (its
 * event is gone, or on its way out, and cursors never move back), and the ledger's posting ids
 * would refuse a second posting anyway.
 */
export const PRUNE_INBOX = `
WITH doomed AS (
  SELECT consumer, tenant_id, message_id
    FROM inbox_messages
   WHERE processed_at < now() - make_interval(secs => $1::float8)
   LIMIT $2
     FOR UPDATE SKIP LOCKED
), gone AS (
  DELETE FROM inbox_messages i
   USING doomed
   WHERE (i.consumer, i.tenant_id, i.message_id) = (doomed.consumer, doomed.tenant_id, doomed.message_id)
  RETURNING 1
)
SELECT count(*)::int AS messages FROM gone`;

/**
 * A batch of circuits that guard nothing: no delivery to the target is pending and the circuit
 * is not open now. $1 batch size. A circuit is written only after a failed attempt whose
 * delivery stays pending, and a delivered or abandoned one deletes it (remote-deliveries.ts);
 * a row outlives its deliveries only when that delete did not happen (the process stopped
 * between the attempt's outcome and the delete, or the delete failed). Its target's next
 * delivery, if one ever comes, then starts with no failures on record, as after a success. A
 * failure recorded meanwhile (a new delivery's, which this batch's snapshot did not see) waits
 * on the row's lock and, once the delete commits, inserts the row again.
 */
export const PRUNE_CIRCUITS = `
WITH doomed AS (
  SELECT k.tenant_id, k.consumer
    FROM outbox_consumer_circuits k
   WHERE k.open_until <= now()
     AND NOT EXISTS (SELECT 1 FROM outbox_deliveries d
                      WHERE d.tenant_id = k.tenant_id AND d.consumer = k.consumer
                        AND d.status = 'pending'
                        -- True of every circuit's consumer (a remote target); written out so that
                        -- the plan may read outbox_deliveries_remote_due_ix, whose predicate it is.
                        AND strpos(d.consumer, ':') > 0)
   LIMIT $1
     FOR UPDATE OF k SKIP LOCKED
), gone AS (
  DELETE FROM outbox_consumer_circuits k
   USING doomed
   WHERE k.tenant_id = doomed.tenant_id AND k.consumer = doomed.consumer
  RETURNING 1
)
SELECT count(*)::int AS circuits FROM gone`;
