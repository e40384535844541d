import { defineEntity, p } from '@mikro-orm/core';

/** `ledger_postings` (migrations/0005): a posting's id is its stable identity. */
export const LedgerPosting = defineEntity({
  name: 'LedgerPosting',
  tableName: 'ledger_postings',
  properties: {
    tenantId: p.uuid().primary(),
    id: p.text().primary(),
    paymentId: p.uuid(),
    kind: p.enum(['capture', 'refund']),
    currency: p.text(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  primaryKeys: ['tenantId', 'id'],
});
