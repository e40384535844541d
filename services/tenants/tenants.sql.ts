/** Creates a tenant by name, or finds it. $1 a new id, $2 name. */
export const UPSERT_TENANT = `
INSERT INTO tenants (id, name) VALUES ($1, $2)
ON CONFLICT ON CONSTRAINT tenants_name_uq DO UPDATE SET updated_at = now()
RETURNING id`;

/**
 * Makes `key` the tenant's bootstrap key (BOOTSTRAP_TENANTS): a key it had from there before,
 * or from before api_keys, is revoked, so changing the variable re-keys the tenant as it always
 * did. Keys an operator issued are left alone. A key already stored stays as it is: one an
 * operator revoked is not revived by a restart. Returns the stored key's tenant, which differs
 * from $1 when another tenant holds this key. $1 tenant, $2 a new id, $3 display prefix,
 * $4 the key's HMAC under the first data key, $5 that key's id (REKEY_API_KEY has run before).
 */
export const PUT_BOOTSTRAP_KEY = `
WITH retired AS (
  UPDATE api_keys SET revoked_at = now()
   WHERE tenant_id = $1 AND origin IN ('bootstrap', 'migrated')
     AND key_hmac IS DISTINCT FROM $4 AND revoked_at IS NULL
), inserted AS (
  INSERT INTO api_keys (id, tenant_id, prefix, key_hmac, key_hmac_key, origin)
  VALUES ($2, $1, $3, $4, $5, 'bootstrap')
  ON CONFLICT ON CONSTRAINT api_keys_key_hmac_uq DO NOTHING
  RETURNING tenant_id
)
SELECT tenant_id FROM inserted
UNION ALL
SELECT tenant_id FROM api_keys WHERE key_hmac = $4 AND NOT EXISTS (SELECT 1 FROM inserted)`;

/**
 * The row of a key stored by its SHA-256 (before migrations/0021) or by the HMAC of a data key
 * no longer first, re-keyed to the first key's HMAC with its SHA-256 cleared and only the
 * display prefix kept. Whoever holds the key may do it; doing it twice changes nothing.
 * $1 the key's SHA-256, $2 its HMACs under every data key (the first key's first), $3 prefix,
 * $4 the first data key's id.
 */
export const REKEY_API_KEY = `
UPDATE api_keys SET key_hmac = ($2::bytea[])[1], key_hmac_key = $4, key_hash = NULL, prefix = $3
 WHERE (key_hash = $1 OR key_hmac = ANY ($2::bytea[]))
   AND key_hmac IS DISTINCT FROM ($2::bytea[])[1]`;
