import { defineEntity, p } from '@mikro-orm/core';

/**
 * `idempotency_low_water` (migrations/0027): one row, the mark every unfinished request is at or
 * above unless parked. Written only by the recovery sweep (low-water.ts).
 */
export const IdempotencyLowWater = defineEntity({
  name: 'IdempotencyLowWater',
  tableName: 'idempotency_low_water',
  properties: {
    onlyRow: p.boolean().primary().defaultRaw('true'),
    lowWater: p.bigint('string'),
    nextLowWater: p.bigint('string'),
    nextAfter: p.type('xid8').columnType('xid8'),
  },
  checks: [
    { name: 'idempotency_low_water_one_row_ck', expression: 'only_row = true' },
    { name: 'idempotency_low_water_order_ck', expression: 'low_water <= next_low_water' },
  ],
});

/**
 * `idempotency_parked` (migrations/0027): unfinished requests below the mark, by id. Written only
 * by the recovery sweep.
 */
export const IdempotencyParked = defineEntity({
  name: 'IdempotencyParked',
  tableName: 'idempotency_parked',
  properties: {
    requestId: p.bigint('string').primary().autoincrement(false),
  },
});
