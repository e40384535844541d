import { defineEntity, p } from '@mikro-orm/core';

/** `outbox_events` (migrations/0005): written in the transaction of the phase that makes it true. */
export const OutboxEvent = defineEntity({
  name: 'OutboxEvent',
  tableName: 'outbox_events',
  properties: {
    tenantId: p.uuid().primary(),
    id: p.text().primary(),
    type: p.text(),
    payload: p.json<unknown>(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  primaryKeys: ['tenantId', 'id'],
});
