import { defineEntity, p } from '@mikro-orm/core';

/**
 * `outbox_events` (migrations/0005; the log columns in 0016): written in the transaction of the
 * phase that makes it true. Events read from the log (outbox_cursors) are ordered by written_by
 * and then log_seq; events written before 0016 have neither.
 */
export const OutboxEvent = defineEntity({
  name: 'OutboxEvent',
  tableName: 'outbox_events',
  properties: {
    tenantId: p.uuid().primary(),
    id: p.text().primary(),
    type: p.text(),
    payload: p.json<unknown>(),
    createdAt: p.datetime().defaultRaw('now()'),
    writtenBy: p.string().columnType('xid8').nullable().defaultRaw('pg_current_xact_id()'),
    // From outbox_events_log_seq (a sequence default, not a serial column: added without a rewrite).
    logSeq: p.bigint('string').nullable().autoincrement(),
    logConsumers: p.array().defaultRaw(`'{}'`),
  },
  primaryKeys: ['tenantId', 'id'],
  indexes: [
    {
      name: 'outbox_events_log_ix',
      expression: `CREATE INDEX outbox_events_log_ix ON outbox_events (written_by, log_seq) WHERE log_consumers <> '{}'`,
    },
    // Retention finds events by age (migrations/0019).
    {
      name: 'outbox_events_created_brin',
      expression: `CREATE INDEX outbox_events_created_brin ON outbox_events USING brin (created_at)`,
    },
  ],
});
