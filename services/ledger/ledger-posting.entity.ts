import { defineEntity, p } from '@mikro-orm/core';

/**
 * `ledger_postings` (migrations/0005, 0024): a posting's id is its stable identity, and its row
 * is its whole entry: one account debited and one credited with one amount, which balance by
 * construction (ADR 0058).
 */
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
    debitAccount: p.text(),
    creditAccount: p.text(),
    amountMinor: p.bigint('string'),
  },
  primaryKeys: ['tenantId', 'id'],
  checks: [
    {
      name: 'ledger_postings_entry_ck',
      expression: 'amount_minor > 0 AND debit_account <> credit_account',
    },
  ],
});
