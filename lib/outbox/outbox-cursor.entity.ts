import { defineEntity, p } from '@mikro-orm/core';

/**
 * `outbox_cursors` (migrations/0016): a consumer that reads the event log, where it stands in it,
 * and the lease of the dispatcher taking its next batch. Written only by event-log.sql.ts.
 */
export const OutboxCursor = defineEntity({
  name: 'OutboxCursor',
  tableName: 'outbox_cursors',
  properties: {
    consumer: p.text().primary(),
    writtenBy: p.string().columnType('xid8').defaultRaw(`'0'`),
    logSeq: p.bigint('string').defaultRaw('0'),
    claim: p.bigint('string').defaultRaw('0'),
    claimedUntil: p.datetime().defaultRaw(`'-infinity'`),
  },
});
