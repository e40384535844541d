import { defineEntity, p } from '@mikro-orm/core';

/**
 * `webhook_endpoints` (migrations/0005). Registration inserts inside an idempotency admission
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
    status: p.enum(['enabled', 'disabled']).defaultRaw(`'enabled'`),
    disabledReason: p.text().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  primaryKeys: ['tenantId', 'id'],
});
