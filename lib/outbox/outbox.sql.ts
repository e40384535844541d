/**
 * An event and its deliveries, in one statement (one round trip inside the phase that makes the
 * event true). A consumer that reads the event log (it has a row in outbox_cursors, 0016) is
 * named in the event's log_consumers and gets no delivery row; every other consumer gets one.
 * Idempotent: an event is written once, and so is each delivery. The deliveries' foreign key is
 * checked at the end of the statement, when the event row the CTE inserted is visible. $1
 * tenant, $2 event id, $3 type, $4 payload, $5 consumers every tenant has (text[]), $6 consumers
 * written only for a tenant subscribed to them (text[]): one probe of outbox_subscriptions'
 * primary key finds those.
 */
export const INSERT_EVENT_WITH_DELIVERIES = `
WITH log AS (
  SELECT ARRAY(SELECT c.consumer FROM outbox_cursors c WHERE c.consumer = ANY ($5::text[])
                ORDER BY c.consumer) AS consumers
), event AS (
  INSERT INTO outbox_events (tenant_id, id, type, payload, log_consumers)
  VALUES ($1, $2, $3, $4, (SELECT consumers FROM log))
  ON CONFLICT ON CONSTRAINT outbox_events_pk DO NOTHING
)
INSERT INTO outbox_deliveries (tenant_id, event_id, consumer)
SELECT $1, $2, wanted.consumer FROM unnest($5::text[]) AS wanted(consumer), log
 WHERE wanted.consumer <> ALL (log.consumers)
UNION ALL
SELECT $1, $2, s.consumer FROM outbox_subscriptions s
 WHERE s.tenant_id = $1 AND s.consumer = ANY ($6::text[])
ON CONFLICT ON CONSTRAINT outbox_deliveries_pk DO NOTHING`;

/** $1 tenant, $2 consumer. Idempotent. */
export const SUBSCRIBE = `
INSERT INTO outbox_subscriptions (tenant_id, consumer) VALUES ($1, $2)
ON CONFLICT ON CONSTRAINT outbox_subscriptions_pk DO NOTHING`;

/**
 * Claims due deliveries to local consumers (no `:target` in the name: the database's own work;
 * remote ones are claimed fairly by remote-deliveries.sql.ts): sets each one's claim lease, so other dispatchers (SKIP LOCKED during
 * the statement, the lease after it) leave it alone while this one works. A dispatcher that dies
 * mid-delivery simply lets the lease run out: the delivery is due again, with the same event id.
 * The lease is `claimed_until`, not `next_attempt_at`: no index holds it, so the claim is a
 * heap-only update (migrations/0015). $1 claim lease ms, $2 batch size.
 */
export const CLAIM_DUE_DELIVERIES = `
UPDATE outbox_deliveries AS d
   SET attempts = d.attempts + 1,
       claimed_until = now() + make_interval(secs => $1::float8 / 1000)
  FROM (SELECT tenant_id, event_id, consumer
          FROM outbox_deliveries
         WHERE status = 'pending' AND strpos(consumer, ':') = 0 AND next_attempt_at <= now()
           AND claimed_until <= now()
         ORDER BY next_attempt_at
         LIMIT $2
           FOR UPDATE SKIP LOCKED) AS due
 WHERE d.tenant_id = due.tenant_id AND d.event_id = due.event_id AND d.consumer = due.consumer
RETURNING d.tenant_id, d.event_id, d.consumer, d.attempts,
          (SELECT row_to_json(e) FROM (SELECT type, payload, created_at FROM outbox_events
                                        WHERE tenant_id = d.tenant_id AND id = d.event_id) e) AS event`;

/**
 * Marks a batch's delivered ones in one statement. $1 tenants, $2 event ids, $3 consumers
 * (arrays, position by position).
 */
export const MARK_ALL_DELIVERED = `
UPDATE outbox_deliveries d SET status = 'delivered', delivered_at = now(), last_error = NULL
  FROM unnest($1::uuid[], $2::text[], $3::text[]) AS m(tenant_id, event_id, consumer)
 WHERE d.tenant_id = m.tenant_id AND d.event_id = m.event_id AND d.consumer = m.consumer
   AND d.status = 'pending'`;

/** $1 tenant, $2 event id, $3 consumer, $4 error, $5 backoff ms. */
export const MARK_RETRY = `
UPDATE outbox_deliveries SET last_error = $4, next_attempt_at = now() + make_interval(secs => $5::float8 / 1000),
       claimed_until = '-infinity'
 WHERE tenant_id = $1 AND event_id = $2 AND consumer = $3 AND status = 'pending'`;

/** $1 tenant, $2 event id, $3 consumer, $4 why. */
export const MARK_ABANDONED = `
UPDATE outbox_deliveries SET status = 'abandoned', last_error = $4
 WHERE tenant_id = $1 AND event_id = $2 AND consumer = $3 AND status = 'pending'`;

/**
 * Backlog for the gauges, per consumer kind (`webhook:<endpoint>` counts as `webhook`, so the
 * label stays bounded): pending deliveries and the age of the oldest. Reads only pending rows,
 * through the partial indexes of due deliveries.
 */
export const BACKLOG = `
SELECT split_part(d.consumer, ':', 1) AS consumer,
       count(*)::int AS pending,
       COALESCE(EXTRACT(EPOCH FROM now() - min(e.created_at)), 0)::float8 AS oldest_age_seconds
  FROM outbox_deliveries d JOIN outbox_events e ON e.tenant_id = d.tenant_id AND e.id = d.event_id
 WHERE d.status = 'pending'
 GROUP BY 1`;
