import { defineEntity, p } from '@mikro-orm/core';

/**
 * `outbox_subscriptions` (migrations/0014): the tenants a consumer that only some tenants have
 * (the webhook fan-out) is written for. Added by its service (subscribeToOutbox), never removed.
 */
export const OutboxSubscription = defineEntity({
  name: 'OutboxSubscription',
  tableName: 'outbox_subscriptions',
  properties: {
    tenantId: p.uuid().primary(),
    consumer: p.text().primary(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  primaryKeys: ['tenantId', 'consumer'],
});
