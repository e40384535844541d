import { defineEntity, p } from '@mikro-orm/core';

/**
 * `idempotency_partitions` (migrations/0007): the retention job's register of the partitions it
 * made. Written only by retention.ts, in the same transaction as the DDL it records.
 */
export const IdempotencyPartition = defineEntity({
  name: 'IdempotencyPartition',
  tableName: 'idempotency_partitions',
  properties: {
    name: p.text().primary(),
    parent: p.enum(['idempotency_keys', 'idempotency_phase_log', 'idempotency_responses']),
    lowerBound: p.datetime(),
    upperBound: p.datetime(),
  },
  checks: [{ name: 'idempotency_partitions_bounds_ck', expression: 'lower_bound < upper_bound' }],
});
