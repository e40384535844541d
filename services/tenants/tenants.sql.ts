/** Creates a tenant or gives an existing one (by name) this key. $1 id, $2 name, $3 key hash. */
export const UPSERT_TENANT = `
INSERT INTO tenants (id, name, api_key_hash) VALUES ($1, $2, $3)
ON CONFLICT ON CONSTRAINT tenants_name_uq
  DO UPDATE SET api_key_hash = EXCLUDED.api_key_hash, updated_at = now()
RETURNING id`;
