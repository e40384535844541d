/** The columns a managed endpoint answers with (never a secret). */
const SUMMARY_COLUMNS = `id, url, status, disabled_reason, event_types, created_at, updated_at`;

/**
 * Enables or disables an endpoint and sets its event types, each only when given. A deleted
 * endpoint matches nothing. $1 tenant, $2 id, $3 enabled (null: unchanged), $4 whether event
 * types are given, $5 event types (null: every type).
 */
export const UPDATE_ENDPOINT = `
UPDATE webhook_endpoints
   SET status = CASE WHEN $3::boolean IS NULL THEN status
                     WHEN $3 THEN 'enabled' ELSE 'disabled' END,
       disabled_reason = CASE WHEN $3::boolean IS NULL THEN disabled_reason
                              WHEN $3 THEN NULL ELSE 'disabled by the merchant' END,
       event_types = CASE WHEN $4 THEN $5::text[] ELSE event_types END,
       updated_at = now()
 WHERE tenant_id = $1 AND id = $2 AND status <> 'deleted'
RETURNING ${SUMMARY_COLUMNS}`;

/** $1 tenant, $2 id. Nothing is delivered to it from now on; its row stays (migrations/0013). */
export const DELETE_ENDPOINT = `
UPDATE webhook_endpoints SET status = 'deleted', updated_at = now()
 WHERE tenant_id = $1 AND id = $2 AND status <> 'deleted'
RETURNING id`;

/**
 * Replaces the signing secret; the one replaced keeps signing beside it until the overlap ends.
 * A rotation during an overlap ends the earlier overlap: only two secrets ever sign.
 * $1 tenant, $2 id, $3 new sealed secret, $4 overlap seconds.
 */
export const ROTATE_SECRET = `
UPDATE webhook_endpoints
   SET previous_secret = secret,
       previous_secret_expires_at = now() + make_interval(secs => $4),
       secret = $3,
       updated_at = now()
 WHERE tenant_id = $1 AND id = $2 AND status <> 'deleted'
RETURNING id, url, status, created_at, previous_secret_expires_at`;

/** $1 tenant, $2 id. */
export const SELECT_LIVE_ENDPOINT = `
SELECT ${SUMMARY_COLUMNS} FROM webhook_endpoints
 WHERE tenant_id = $1 AND id = $2 AND status <> 'deleted'`;

/** $1 tenant. */
export const LIST_ENDPOINTS = `
SELECT ${SUMMARY_COLUMNS} FROM webhook_endpoints
 WHERE tenant_id = $1 AND status <> 'deleted'
 ORDER BY created_at, id`;

const DELIVERY_COLUMNS = `
  d.event_id, e.type AS event_type, d.status, d.attempts, d.last_error,
  CASE WHEN d.status = 'pending' THEN d.next_attempt_at END AS next_attempt_at,
  d.delivered_at, e.created_at AS event_created_at`;

/**
 * One page of an endpoint's deliveries in webhook-id order, on outbox_deliveries_webhook_ix:
 * each page costs its own size. $1 tenant, $2 consumer ('webhook:<id>'), $3 page size + 1, and
 * for a later page $4 the last event id of the previous one. Two texts, not one with
 * `$4 IS NULL OR …`: the pool plans each once for any values (pool.ts, PlanCacheMode), and a
 * plan made for both pages could not start a later page at its cursor in the index.
 */
function listDeliveries(page: 'first' | 'after'): string {
  return `
SELECT ${DELIVERY_COLUMNS}
  FROM outbox_deliveries d
  JOIN outbox_events e ON e.tenant_id = d.tenant_id AND e.id = d.event_id
 WHERE d.tenant_id = $1 AND d.consumer = $2 AND d.consumer LIKE 'webhook:%'${
   page === 'after' ? '\n   AND d.event_id > $4' : ''
 }
 ORDER BY d.event_id
 LIMIT $3`;
}

export const LIST_DELIVERIES_FIRST_PAGE = listDeliveries('first');
export const LIST_DELIVERIES_AFTER = listDeliveries('after');

/** One delivery, as a listing shows it. $1 tenant, $2 event id, $3 consumer ('webhook:<id>'). */
export const SELECT_DELIVERY = `
SELECT ${DELIVERY_COLUMNS}
  FROM outbox_deliveries d
  JOIN outbox_events e ON e.tenant_id = d.tenant_id AND e.id = d.event_id
 WHERE d.tenant_id = $1 AND d.event_id = $2 AND d.consumer = $3`;

/**
 * Delivers an event to an endpoint again, from the first attempt: due now, its error and its
 * give-up count cleared. The webhook-id stays the event's, so a merchant that already has it
 * deduplicates. $1 tenant, $2 event id, $3 consumer ('webhook:<id>').
 */
export const REDELIVER = `
WITH again AS (
  UPDATE outbox_deliveries
     SET status = 'pending', attempts = 0, next_attempt_at = now(), claimed_until = '-infinity',
         last_error = NULL, delivered_at = NULL
   WHERE tenant_id = $1 AND event_id = $2 AND consumer = $3
  RETURNING *
)
SELECT ${DELIVERY_COLUMNS}
  FROM again d
  JOIN outbox_events e ON e.tenant_id = d.tenant_id AND e.id = d.event_id`;
