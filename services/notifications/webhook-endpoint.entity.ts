import { defineEntity, p } from '@mikro-orm/core';

/**
 * `webhook_endpoints` (migrations/0005, management in 0013). Registration inserts inside an idempotency admission
 * (notifications.sql.ts); `secret` is a sealed envelope that only webhook-secret.ts opens.
 */
export const WebhookEndpoint = defineEntity({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoints',
  properties: {
    tenantId: p.uuid().primary(),
    id: p.uuid().primary(),
    url: p.text(),
    secret: p
      .text()
      .comment(
        'a v1 envelope (AES-256-GCM) of the whsec_ signing secret; whsec_ in clear is a row from before sealing',
      ),
    status: p.enum(['enabled', 'disabled', 'deleted']).defaultRaw(`'enabled'`),
    disabledReason: p.text().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    // migrations/0013: the types it receives (NULL: all), and the secret a rotation replaced,
    // which keeps signing beside the new one until it expires.
    eventTypes: p.array().nullable(),
    previousSecret: p.text().nullable(),
    previousSecretExpiresAt: p.datetime().nullable(),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
  primaryKeys: ['tenantId', 'id'],
  checks: [
    {
      name: 'webhook_endpoints_previous_secret_ck',
      expression: '(previous_secret IS NULL) = (previous_secret_expires_at IS NULL)',
    },
  ],
});
