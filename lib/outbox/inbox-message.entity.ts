import { defineEntity, p } from '@mikro-orm/core';

/**
 * `inbox_messages` (migrations/0005): a consumer's memory of the messages it has applied,
 * written in the same transaction as the effect (ON CONFLICT DO NOTHING in ledger.sql.ts).
 */
export const InboxMessage = defineEntity({
  name: 'InboxMessage',
  tableName: 'inbox_messages',
  properties: {
    consumer: p.text().primary(),
    tenantId: p.uuid().primary(),
    messageId: p.text().primary(),
    processedAt: p.datetime().defaultRaw('now()'),
  },
  primaryKeys: ['consumer', 'tenantId', 'messageId'],
});
