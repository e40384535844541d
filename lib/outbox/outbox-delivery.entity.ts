import { defineEntity, p } from '@mikro-orm/core';
import { OutboxEvent } from './outbox-event.entity.ts';

/**
 * `outbox_deliveries` (migrations/0005; the claim lease and fillfactor in 0015; the due indexes in 0020): one per event
 * and consumer, claimed by outbox.sql.ts.
 */
export const OutboxDelivery = defineEntity({
  name: 'OutboxDelivery',
  tableName: 'outbox_deliveries',
  properties: {
    tenantId: p.uuid().primary(),
    // The event, by (tenant_id, event_id): tenant_id is shared with this row's primary key.
    event: () =>
      p
        .manyToOne(OutboxEvent)
        .primary()
        .fieldNames('tenant_id', 'event_id')
        .foreignKeyName('outbox_deliveries_event_fk')
        .updateRule('no action')
        .deleteRule('no action')
        .ref(),
    consumer: p.text().primary(),
    status: p.enum(['pending', 'delivered', 'abandoned']).defaultRaw(`'pending'`),
    attempts: p.integer().defaultRaw('0'),
    nextAttemptAt: p.datetime().defaultRaw('now()'),
    claimedUntil: p.datetime().defaultRaw(`'-infinity'`),
    lastError: p.text().nullable(),
    deliveredAt: p.datetime().nullable(),
  },
  primaryKeys: ['tenantId', 'event', 'consumer'],
  indexes: [
    {
      name: 'outbox_deliveries_remote_due_ix',
      expression: `CREATE INDEX outbox_deliveries_remote_due_ix ON outbox_deliveries (tenant_id, next_attempt_at) WHERE status = 'pending' AND strpos(consumer, ':') > 0`,
    },
    {
      name: 'outbox_deliveries_local_due_ix',
      expression: `CREATE INDEX outbox_deliveries_local_due_ix ON outbox_deliveries (next_attempt_at) WHERE status = 'pending' AND strpos(consumer, ':') = 0`,
    },
    {
      name: 'outbox_deliveries_webhook_ix',
      expression: `CREATE INDEX outbox_deliveries_webhook_ix ON outbox_deliveries (tenant_id, consumer, event_id) WHERE consumer LIKE 'webhook:%'`,
    },
  ],
});
