/** The payments service's statements. Every one filters by tenant_id first. */

const PAYMENT_COLUMNS = `
  id, status, amount_minor, currency, amount_captured_minor, amount_refunded_minor,
  payment_method, capture_method, reference, description, metadata, provider_key,
  provider_reference, failure_code, created_at`;

/** $1 tenant, $2 id, $3 amount minor, $4 currency, $5 payment method, $6 capture method,
 * $7 reference, $8 description, $9 metadata, $10 provider key (the durable intent).
 * Returns the row, so the owner goes on without reading it back. */
export const INSERT_PAYMENT = `
INSERT INTO payments (tenant_id, id, status, amount_minor, currency, payment_method, capture_method,
                      reference, description, metadata, provider_key)
VALUES ($1, $2, 'PROCESSING', $3, $4, $5, $6, $7, $8, $9, $10)
RETURNING ${PAYMENT_COLUMNS}`;

/** $1 tenant, $2 id. */
export const SELECT_PAYMENT = `
SELECT ${PAYMENT_COLUMNS} FROM payments WHERE tenant_id = $1 AND id = $2`;

/** $1 tenant, $2 id, $3 status, $4 amount captured minor, $5 provider reference, $6 failure code.
 * Only from PROCESSING: an outcome is recorded once. */
export const RECORD_CHARGE_OUTCOME = `
UPDATE payments
   SET status = $3, amount_captured_minor = $4, provider_reference = $5, failure_code = $6,
       updated_at = now()
 WHERE tenant_id = $1 AND id = $2 AND status = 'PROCESSING'`;

/**
 * Newest first, keyset-paginated on (created_at, id). The cursor carries created_at in whole
 * microseconds (a JS Date would cut it to milliseconds and repeat rows across pages).
 * $1 tenant, $2 page size + 1, $3/$4 the cursor's microseconds/id (null on the first page),
 * $5 reference filter or null.
 */
export const LIST_PAYMENTS = `
SELECT ${PAYMENT_COLUMNS},
       (EXTRACT(EPOCH FROM created_at) * 1000000)::bigint::text AS created_us
  FROM payments
 WHERE tenant_id = $1
   AND ($5::text IS NULL OR reference = $5)
   AND ($3::bigint IS NULL
        OR (created_at, id) < (timestamptz 'epoch' + $3::bigint * interval '1 microsecond', $4::uuid))
 ORDER BY created_at DESC, id DESC
 LIMIT $2`;
