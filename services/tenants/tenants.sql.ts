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
 * from $1 when another tenant holds this key. $1 tenant, $2 a new id, $3 prefix, $4 key hash.
 */
export const PUT_BOOTSTRAP_KEY = `
WITH retired AS (
  UPDATE api_keys SET revoked_at = now()
   WHERE tenant_id = $1 AND origin IN ('bootstrap', 'migrated') AND key_hash <> $4
     AND revoked_at IS NULL
), inserted AS (
  INSERT INTO api_keys (id, tenant_id, prefix, key_hash, origin)
  VALUES ($2, $1, $3, $4, 'bootstrap')
  ON CONFLICT ON CONSTRAINT api_keys_key_hash_uq DO NOTHING
  RETURNING tenant_id
)
SELECT tenant_id FROM inserted
UNION ALL
SELECT tenant_id FROM api_keys WHERE key_hash = $4 AND NOT EXISTS (SELECT 1 FROM inserted)`;
