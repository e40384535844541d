import { defineEntity, p } from '@mikro-orm/core';

/**
 * `tenants` (migrations/0001). Read through the EntityManager (authentication by key hash);
 * written by UPSERT_TENANT, whose ON CONFLICT decides a rename race in the database.
 */
export const Tenant = defineEntity({
  name: 'Tenant',
  tableName: 'tenants',
  properties: {
    id: p.uuid().primary(),
    name: p.text().unique('tenants_name_uq'),
    // SHA-256 of the API key: only the hash is stored (api-keys.ts).
    apiKeyHash: p.blob().unique('tenants_api_key_hash_uq'),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
});
