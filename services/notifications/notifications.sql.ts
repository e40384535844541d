/** $1 tenant, $2 receipt id, $3 payment id, $4 event id. One receipt per payment, however often delivered. */
export const INSERT_RECEIPT = `
INSERT INTO receipts (tenant_id, id, payment_id, event_id) VALUES ($1, $2, $3, $4)
ON CONFLICT ON CONSTRAINT receipts_pk DO NOTHING`;

/** $1 tenant. */
export const SELECT_ENABLED_ENDPOINTS = `
SELECT id FROM webhook_endpoints WHERE tenant_id = $1 AND status = 'enabled' ORDER BY created_at`;

/** $1 tenant, $2 id. */
export const SELECT_ENDPOINT = `
SELECT id, url, secret, status, created_at FROM webhook_endpoints WHERE tenant_id = $1 AND id = $2`;

/** $1 tenant, $2 id, $3 reason. */
export const DISABLE_ENDPOINT = `
UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = $3 WHERE tenant_id = $1 AND id = $2`;

/** $1 tenant, $2 id, $3 url, $4 secret. */
export const INSERT_ENDPOINT = `
INSERT INTO webhook_endpoints (tenant_id, id, url, secret) VALUES ($1, $2, $3, $4)
RETURNING id, url, secret, status, created_at`;
