import { defineEntity, p } from '@mikro-orm/core';
import { Tenant } from './tenant.entity.ts';

/**
 * `api_keys` (migrations/0012): a tenant's keys, each stored as its SHA-256 only. Read and
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
    keyHash: p.blob().unique('api_keys_key_hash_uq'),
    origin: p.enum(['bootstrap', 'issued', 'migrated']),
    createdAt: p.datetime().defaultRaw('now()'),
    lastUsedAt: p.datetime().nullable(),
    expiresAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
  },
  indexes: [{ name: 'api_keys_tenant_ix', properties: ['tenant', 'createdAt'] }],
});
