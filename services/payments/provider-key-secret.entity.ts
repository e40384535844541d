import { defineEntity, p } from '@mikro-orm/core';

/**
 * `provider_key_secret` (migrations/0018): the one row holding the secret provider keys are
 * derived under. Read by SELECT_PROVIDER_KEY_SECRET (provider-keys.ts), never written after the
 * migration; the entity exists so the schema check sees the table as the payments service's.
 */
export const ProviderKeySecretRow = defineEntity({
  name: 'ProviderKeySecretRow',
  tableName: 'provider_key_secret',
  checks: [
    { name: 'provider_key_secret_one_row', expression: 'id = 1' },
    { name: 'provider_key_secret_length', expression: 'octet_length(secret) = 32' },
  ],
  properties: {
    id: p.smallint().primary().autoincrement(false).default(1),
    secret: p.blob(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
});
