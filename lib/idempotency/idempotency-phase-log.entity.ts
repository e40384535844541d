import { defineEntity, p } from '@mikro-orm/core';

/**
 * `idempotency_phase_log` (migrations/0007), partitioned by expires_at like idempotency_keys.
 * Written only inside each phase's transaction (idempotency.sql.ts): its primary key is what
 * refuses a second commit of one recovery point. The finish writes no row here: the finished
 * key row records it (ADR 0054).
 */
export const IdempotencyPhaseLogEntry = defineEntity({
  name: 'IdempotencyPhaseLogEntry',
  tableName: 'idempotency_phase_log',
  properties: {
    requestId: p.bigint('string').primary(),
    tenantId: p.uuid(),
    operation: p.text(),
    key: p.text(),
    recoveryPoint: p.text().primary(),
    fencingToken: p.bigint('string'),
    committedAt: p.datetime().defaultRaw('now()'),
    expiresAt: p.datetime().primary(),
  },
  primaryKeys: ['requestId', 'recoveryPoint', 'expiresAt'],
});
