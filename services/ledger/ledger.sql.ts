/** $1 consumer, $2 tenant, $3 message id. No row back: this message's effect was made already. */
export const CLAIM_INBOX_MESSAGE = `
INSERT INTO inbox_messages (consumer, tenant_id, message_id) VALUES ($1, $2, $3)
ON CONFLICT ON CONSTRAINT inbox_messages_pk DO NOTHING
RETURNING message_id`;

/** $1 tenant, $2 posting id, $3 payment id, $4 kind, $5 currency. No row back: posted already. */
export const INSERT_POSTING = `
INSERT INTO ledger_postings (tenant_id, id, payment_id, kind, currency) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT ON CONSTRAINT ledger_postings_pk DO NOTHING
RETURNING id`;

/** $1 tenant, $2 posting id, $3 line, $4 account, $5 debit minor, $6 credit minor, $7 currency. */
export const INSERT_LINE = `
INSERT INTO ledger_lines (tenant_id, posting_id, line, account, debit_minor, credit_minor, currency)
VALUES ($1, $2, $3, $4, $5, $6, $7)`;

/** What a merchant may pay out, per currency: the credits and debits of its balance account. */
export const SELECT_BALANCES = `
SELECT currency, (sum(credit_minor) - sum(debit_minor))::text AS available_minor
  FROM ledger_lines
 WHERE tenant_id = $1 AND account = 'merchant_balance'
 GROUP BY currency
 ORDER BY currency`;

/** Debits and credits per currency over every account; equal when the books balance. */
export const SELECT_TRIAL_BALANCE = `
SELECT currency, sum(debit_minor)::text AS debits_minor, sum(credit_minor)::text AS credits_minor
  FROM ledger_lines
 WHERE tenant_id = $1
 GROUP BY currency
 ORDER BY currency`;
