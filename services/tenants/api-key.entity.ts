import { defineEntity, p } from '@mikro-orm/core';
import { Tenant } from './tenant.entity.ts';

/**
 * `api_keys` (migrations/0012, 0021): a tenant's keys, each stored as its HMAC under the data
 * keys (`keyHmac`); a row from before 0021 holds its unsalted SHA-256 (`keyHash`) until the key
 * is next authenticated, which replaces one by the other (api-keys.ts). Read and
 * managed through the EntityManager (api-keys.ts); a bootstrap key is written by SQL
 * (tenants.sql.ts), whose ON CONFLICT decides a concurrent start in the database.
 */
export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: p.uuid().primary(),
    tenant: () =>
      p
        .manyToOne(Tenant)
        .fieldName('tenant_id')
        .foreignKeyName('api_keys_tenant_fk')
        .updateRule('no action')
        .deleteRule('no action')
        .ref(),
    prefix: p.text().nullable(),
    keyHash: p.blob().nullable().unique('api_keys_key_hash_uq'),
    keyHmac: p.blob().nullable().unique('api_keys_key_hmac_uq'),
    /** The data key `keyHmac` is made under (its id in DATA_ENCRYPTION_KEYS). */
    keyHmacKey: p.text().nullable(),
    origin: p.enum(['bootstrap', 'issued', 'migrated']),
    createdAt: p.datetime().defaultRaw('now()'),
    lastUsedAt: p.datetime().nullable(),
    expiresAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
  },
  indexes: [{ name: 'api_keys_tenant_ix', properties: ['tenant', 'createdAt'] }],
  checks: [
    { name: 'api_keys_hashed_ck', expression: 'key_hmac IS NOT NULL OR key_hash IS NOT NULL' },
    {
      name: 'api_keys_key_hmac_key_ck',
      expression: '(key_hmac IS NULL) = (key_hmac_key IS NULL)',
    },
  ],
});
