/*
 * Deliveries to remote targets (consumers named `kind:target`, migrations/0020), claimed fairly
 * across tenants and held back per target while its circuit is open (remote-deliveries.ts).
 */

/**
 * Claims due remote deliveries, fairly. $1 claim lease ms, $2 rows at most (the sender's free
 * slots), $3 a tenant's deliveries in flight at most, $4 and $5 the tenants with deliveries in
 * flight in this sender and how many (uuid[], int[]), $6 the tenant the previous claim's scan
 * stopped at (the nil uuid: from the start), $7 tenants visited at most, $8 the consecutive
 * failures that open a target's circuit.
 *
 * - `waiting`: the tenants with pending remote rows after $6, in order, one index probe each
 *   (a loose scan of outbox_deliveries_remote_due_ix), at most $7 of them. The next claim starts
 *   after the last one visited, so every tenant gets its turn however many there are.
 * - `candidates`: each tenant's due rows, oldest first, whose target's circuit is not open, at
 *   most $3, locked (SKIP LOCKED: another sender's rows are left to it), with the consecutive
 *   failures of its target so far. A target whose circuit has opened before gets one row (a
 *   single probe, not a volley into a dead endpoint).
 * - `chosen`: a tenant's turn is its deliveries already in flight plus the row's place in its
 *   queue; the lowest turns go first. Each waiting tenant gets a slot before any tenant gets
 *   another, and a tenant never holds more than $3: a tenant whose endpoints all hang holds its
 *   share of the sender and no more.
 *
 * The last row carries no delivery, only `scanned_to`: the tenant the scan stopped at when it
 * visited $7, or NULL when it reached the end.
 */
export const CLAIM_REMOTE_DELIVERIES = `
WITH RECURSIVE waiting(tenant_id, visited) AS (
  (SELECT tenant_id, 1 FROM outbox_deliveries
    WHERE status = 'pending' AND strpos(consumer, ':') > 0 AND tenant_id > $6::uuid
    ORDER BY tenant_id LIMIT 1)
  UNION ALL
  SELECT (SELECT d.tenant_id FROM outbox_deliveries d
           WHERE d.status = 'pending' AND strpos(d.consumer, ':') > 0 AND d.tenant_id > w.tenant_id
           ORDER BY d.tenant_id LIMIT 1),
         w.visited + 1
    FROM waiting w
   WHERE w.tenant_id IS NOT NULL AND w.visited < $7
), candidates AS (
  SELECT c.tenant_id, c.event_id, c.consumer, c.next_attempt_at,
         coalesce(b.busy, 0)
           + row_number() OVER (PARTITION BY c.tenant_id ORDER BY c.next_attempt_at) AS turn,
         row_number() OVER (PARTITION BY c.tenant_id, c.consumer ORDER BY c.next_attempt_at)
           AS consumer_turn,
         c.failures, c.failures >= $8 AS failing
    FROM waiting w
    LEFT JOIN unnest($4::uuid[], $5::int[]) AS b(tenant_id, busy) ON b.tenant_id = w.tenant_id
   CROSS JOIN LATERAL (
     SELECT d.tenant_id, d.event_id, d.consumer, d.next_attempt_at,
            coalesce((SELECT k.failures FROM outbox_consumer_circuits k
                       WHERE k.tenant_id = d.tenant_id AND k.consumer = d.consumer), 0) AS failures
       FROM outbox_deliveries d
      WHERE d.tenant_id = w.tenant_id AND d.status = 'pending' AND strpos(d.consumer, ':') > 0
        AND d.next_attempt_at <= now() AND d.claimed_until <= now()
        AND NOT EXISTS (SELECT 1 FROM outbox_consumer_circuits k
                         WHERE k.tenant_id = d.tenant_id AND k.consumer = d.consumer
                           AND k.open_until > now())
      ORDER BY d.next_attempt_at
      LIMIT $3
        FOR UPDATE OF d SKIP LOCKED) AS c
   WHERE w.tenant_id IS NOT NULL
), chosen AS (
  SELECT tenant_id, event_id, consumer, failures, failing FROM candidates
   WHERE turn <= $3 AND (NOT failing OR consumer_turn = 1)
   ORDER BY turn, next_attempt_at
   LIMIT $2
), probing AS (
  -- A failing target's probe holds its circuit for the claim's lease: no second claim sends it
  -- another while the probe is out. The probe's outcome closes or reopens it.
  UPDATE outbox_consumer_circuits k
     SET open_until = now() + make_interval(secs => $1::float8 / 1000)
    FROM chosen
   WHERE chosen.failing AND k.tenant_id = chosen.tenant_id AND k.consumer = chosen.consumer
), claimed AS (
  UPDATE outbox_deliveries AS d
     SET attempts = d.attempts + 1,
         claimed_until = now() + make_interval(secs => $1::float8 / 1000)
    FROM chosen
   WHERE d.tenant_id = chosen.tenant_id AND d.event_id = chosen.event_id
     AND d.consumer = chosen.consumer
  RETURNING d.tenant_id, d.event_id, d.consumer, d.attempts, chosen.failures,
            (SELECT row_to_json(e) FROM (SELECT type, payload, created_at FROM outbox_events
                                          WHERE tenant_id = d.tenant_id AND id = d.event_id) e)
              AS event
)
SELECT tenant_id, event_id, consumer, attempts, failures, event, NULL::uuid AS scanned_to
  FROM claimed
UNION ALL
SELECT NULL, NULL, NULL, NULL, NULL, NULL, (SELECT tenant_id FROM waiting WHERE visited = $7)`;

/**
 * A remote target failed: one more consecutive failure. From the $5th on, its circuit opens
 * (again) for base × 2^(failures − $5) ms, capped, and its other pending deliveries not claimed
 * now wait until it closes, so that none of them spends a sender slot on a target known to be
 * failing. Below $5 nothing waits: a live endpoint that refuses now and then is retried as
 * before, each delivery on its own backoff. $1 tenant, $2 consumer, $3 base ms, $4 cap ms, $5
 * the consecutive failures that open it.
 */
export const RECORD_FAILURE = `
WITH circuit AS (
  INSERT INTO outbox_consumer_circuits AS k (tenant_id, consumer, failures, open_until)
  VALUES ($1, $2, 1, CASE WHEN $5::int <= 1 THEN now() + make_interval(secs => $3::float8 / 1000)
                          ELSE '-infinity' END)
  ON CONFLICT ON CONSTRAINT outbox_consumer_circuits_pk DO UPDATE
     SET failures = k.failures + 1,
         open_until = CASE WHEN k.failures + 1 >= $5::int
                           THEN now() + make_interval(secs => least($4::float8,
                                  $3::float8 * 2 ^ (k.failures + 1 - $5::int)) / 1000)
                           ELSE '-infinity' END
  RETURNING open_until
)
UPDATE outbox_deliveries d SET next_attempt_at = circuit.open_until
  FROM circuit
 WHERE d.tenant_id = $1 AND d.consumer = $2 AND d.status = 'pending'
   -- True of every remote consumer ($2); written out so that the plan may read
   -- outbox_deliveries_remote_due_ix, whose predicate it is, instead of the whole table.
   AND strpos(d.consumer, ':') > 0
   AND d.claimed_until <= now() AND d.next_attempt_at < circuit.open_until`;

/** A remote target answered: its failures are forgotten, its circuit closed. $1 tenant, $2 consumer. */
export const CLOSE_CIRCUIT = `
DELETE FROM outbox_consumer_circuits WHERE tenant_id = $1 AND consumer = $2`;
