import { defineEntity, p } from '@mikro-orm/core';

/**
 * `tenants` (migrations/0001; its keys moved to api_keys in 0012). Written by UPSERT_TENANT, whose ON CONFLICT decides a rename race in the database.
 */
export const Tenant = defineEntity({
  name: 'Tenant',
  tableName: 'tenants',
  properties: {
    id: p.uuid().primary(),
    name: p.text().unique('tenants_name_uq'),
    // Superseded by api_keys (migrations/0012): never written, kept for a rolling deploy.
    apiKeyHash: p
      .blob()
      .nullable()
      .unique('tenants_api_key_hash_uq')
      .comment(
        'superseded by api_keys (migrations/0012); NULL for tenants created since, never written',
      ),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
});
