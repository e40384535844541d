/**
 * Movements posted in one statement (post-movements.ts), arrays position by position: $1
 * tenants, $2 message ids, $3 posting ids, $4 payment ids, $5 kinds, $6 currencies, $7 amounts in
 * minor units, $8 debited and $9 credited accounts. The inbox claims each message once; only a
 * fresh message's movement reaches the postings, once per posting id (the first such message),
 * and only a posting inserted now gets lines. The lines' foreign key is checked at the end of
 * the statement, when the postings this statement inserted are visible; their balance (0006)
 * at commit. Back: the postings inserted.
 */
export const POST_MOVEMENTS = `
WITH m AS (
  SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[], $5::text[], $6::text[],
                       $7::bigint[], $8::text[], $9::text[])
           WITH ORDINALITY AS m(tenant_id, message_id, posting_id, payment_id, kind, currency,
                                amount_minor, debit_account, credit_account, n)
), fresh AS (
  INSERT INTO inbox_messages (consumer, tenant_id, message_id)
  SELECT 'ledger', tenant_id, message_id FROM m
  ON CONFLICT ON CONSTRAINT inbox_messages_pk DO NOTHING
  RETURNING tenant_id, message_id
), movement AS (
  SELECT DISTINCT ON (m.tenant_id, m.posting_id) m.*
    FROM m JOIN fresh USING (tenant_id, message_id)
   ORDER BY m.tenant_id, m.posting_id, m.n
), posted AS (
  INSERT INTO ledger_postings (tenant_id, id, payment_id, kind, currency)
  SELECT tenant_id, posting_id, payment_id, kind, currency FROM movement
  ON CONFLICT ON CONSTRAINT ledger_postings_pk DO NOTHING
  RETURNING tenant_id, id, kind
), lines AS (
  INSERT INTO ledger_lines (tenant_id, posting_id, line, account, debit_minor, credit_minor, currency)
  SELECT v.tenant_id, v.posting_id, l.line, l.account, l.debit_minor, l.credit_minor, v.currency
    FROM posted p
    JOIN movement v ON v.tenant_id = p.tenant_id AND v.posting_id = p.id
   CROSS JOIN LATERAL (VALUES (1, v.debit_account, v.amount_minor, 0::bigint),
                              (2, v.credit_account, 0::bigint, v.amount_minor))
                   AS l(line, account, debit_minor, credit_minor)
)
SELECT id, kind FROM posted`;

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
