import { defineEntity, p } from '@mikro-orm/core';

/** `idempotency_interventions` (migrations/0002): every settlement or operator decision. */
export const IdempotencyIntervention = defineEntity({
  name: 'IdempotencyIntervention',
  tableName: 'idempotency_interventions',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    tenantId: p.uuid(),
    operation: p.text(),
    key: p.text(),
    action: p.enum([
      'reconciled_charge_found',
      'reconciled_charge_absent',
      'redriven',
      'resolved_charged',
      'resolved_not_charged',
    ]),
    decidedBy: p.text(),
    reason: p.text(),
    providerReference: p.text().nullable(),
    decidedAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [
    {
      name: 'idempotency_interventions_scope_ix',
      properties: ['tenantId', 'operation', 'key', 'decidedAt'],
    },
  ],
});
