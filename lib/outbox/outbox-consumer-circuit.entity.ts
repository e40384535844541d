import { defineEntity, p } from '@mikro-orm/core';

/**
 * `outbox_consumer_circuits` (migrations/0020): a remote target failing now, left alone until
 * `openUntil`. Written and deleted by remote-deliveries.sql.ts only.
 */
export const OutboxConsumerCircuit = defineEntity({
  name: 'OutboxConsumerCircuit',
  tableName: 'outbox_consumer_circuits',
  properties: {
    tenantId: p.uuid().primary(),
    consumer: p.text().primary(),
    failures: p.integer(),
    openUntil: p.datetime(),
  },
  primaryKeys: ['tenantId', 'consumer'],
  checks: [{ name: 'outbox_consumer_circuits_failures_ck', expression: 'failures > 0' }],
});
