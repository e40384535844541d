/**
 * Receipts, one per payment however often delivered: $1 tenants, $2 receipt ids, $3 payment ids,
 * $4 event ids (arrays, position by position). Skips receipts already made by a probe, not ON
 * CONFLICT, unless it races another delivery of the same payment's (ADR 0066).
 */
export const INSERT_RECEIPTS = {
  probing: insertReceipts(`
 WHERE NOT EXISTS (SELECT 1 FROM receipts x WHERE x.tenant_id = r.tenant_id AND x.id = r.id)`),
  racing: insertReceipts(`
ON CONFLICT ON CONSTRAINT receipts_pk DO NOTHING`),
  constraint: 'receipts_pk',
};

function insertReceipts(skipping: string): string {
  return `
INSERT INTO receipts (tenant_id, id, payment_id, event_id)
SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[]) AS r(tenant_id, id, payment_id, event_id)${skipping}`;
}

/** The endpoints an event goes to: enabled, and subscribed to its type. $1 tenant, $2 type. */
export const SELECT_ENABLED_ENDPOINTS = `
SELECT id FROM webhook_endpoints
 WHERE tenant_id = $1 AND status = 'enabled' AND (event_types IS NULL OR $2 = ANY (event_types))
 ORDER BY created_at`;

/** $1 tenant, $2 id. */
export const SELECT_ENDPOINT = `
SELECT id, url, secret, status, created_at FROM webhook_endpoints WHERE tenant_id = $1 AND id = $2`;

/** $1 tenant, $2 id, $3 reason. */
export const DISABLE_ENDPOINT = `
UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = $3 WHERE tenant_id = $1 AND id = $2`;

/** $1 tenant, $2 id, $3 url, $4 secret. */
/**
 * Locks the tenant's set of endpoints for the rest of the transaction, so that two registrations
 * at once count one after the other, never both under the cap together. A statement of its own:
 * COUNT_ENDPOINTS must take its snapshot after the lock is granted, which in READ COMMITTED
 * happens only in a later statement. $1 tenant.
 */
export const LOCK_TENANT_ENDPOINTS = `
SELECT pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || $1::text, 0))`;

/** The tenant's endpoints that count against its cap: enabled or disabled. $1 tenant. */
export const COUNT_ENDPOINTS = `
SELECT count(*)::int AS endpoints FROM webhook_endpoints WHERE tenant_id = $1 AND status <> 'deleted'`;

export const INSERT_ENDPOINT = `
INSERT INTO webhook_endpoints (tenant_id, id, url, secret) VALUES ($1, $2, $3, $4)
RETURNING id, url, secret, status, created_at`;

/**
 * Signing secrets not yet sealed under key $1 (in clear, or under another key), after the
 * cursor ($2 tenant, $3 id), in key order, at most $4. For `ops reencrypt`.
 */
export const SELECT_SECRETS_TO_RESEAL = `
SELECT tenant_id, id, secret FROM webhook_endpoints
 WHERE (tenant_id, id) > ($2::uuid, $3::uuid)
   AND NOT starts_with(secret, 'v1.' || $1 || '.')
 ORDER BY tenant_id, id
 LIMIT $4`;

/**
 * Writes re-sealed secrets, each only if the row still holds the value it was read with, so a
 * concurrent change is never overwritten. $1 tenants, $2 ids, $3 values as read, $4 sealed.
 */
export const WRITE_RESEALED_SECRETS = `
UPDATE webhook_endpoints e
   SET secret = u.sealed
  FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[]) AS u(tenant_id, id, was, sealed)
 WHERE e.tenant_id = u.tenant_id AND e.id = u.id AND e.secret = u.was`;

/** Signing secrets by the key that sealed them ('' for secrets in clear). */
export const COUNT_SECRETS_BY_KEY = `
SELECT CASE WHEN secret LIKE 'v1.%' THEN split_part(secret, '.', 2) ELSE '' END AS key_id,
       count(*)::int AS n
  FROM webhook_endpoints
 GROUP BY 1`;
