import { defineEntity, p } from '@mikro-orm/core';
import { LedgerPosting } from './ledger-posting.entity.ts';

/**
 * `ledger_lines` (migrations/0005). The balance of a posting is checked at commit by a deferred
 * constraint trigger (0006), which no entity can express: write lines only through ledger.sql.ts.
 */
export const LedgerLine = defineEntity({
  name: 'LedgerLine',
  tableName: 'ledger_lines',
  properties: {
    tenantId: p.uuid().primary(),
    // The posting, by (tenant_id, posting_id): tenant_id is shared with this row's primary key.
    posting: () =>
      p
        .manyToOne(LedgerPosting)
        .primary()
        .fieldNames('tenant_id', 'posting_id')
        .foreignKeyName('ledger_lines_posting_fk')
        .updateRule('no action')
        .deleteRule('no action')
        .ref(),
    line: p.smallint().primary(),
    account: p.text(),
    debitMinor: p.bigint('string').defaultRaw('0'),
    creditMinor: p.bigint('string').defaultRaw('0'),
    currency: p.text(),
  },
  primaryKeys: ['tenantId', 'posting', 'line'],
  checks: [
    {
      name: 'ledger_lines_one_side_ck',
      expression:
        '(debit_minor > 0) <> (credit_minor > 0) AND debit_minor >= 0 AND credit_minor >= 0',
    },
  ],
  indexes: [{ name: 'ledger_lines_account_ix', properties: ['tenantId', 'account', 'currency'] }],
});
