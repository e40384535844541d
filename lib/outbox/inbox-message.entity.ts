import { defineEntity, p } from '@mikro-orm/core';

/**
 * `inbox_messages` (migrations/0005): a consumer's memory of the messages it has applied,
 * written in the same transaction as the effect. Nothing writes it since the ledger remembers
 * by posting id (docs/decisions/0049-the-ledger-remembers-by-posting-id.md); retention prunes
 * what is left.
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
  // Retention finds rows by age (migrations/0019).
  indexes: [
    {
      name: 'inbox_messages_processed_brin',
      expression: `CREATE INDEX inbox_messages_processed_brin ON inbox_messages USING brin (processed_at)`,
    },
  ],
});
