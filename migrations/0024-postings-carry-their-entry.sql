-- A ledger posting carries its entry: the account debited, the account credited and the amount,
-- in its own row (ADR 0058). Until now each posting had two rows in ledger_lines, one debit and
-- one credit of the same amount, and a deferred constraint trigger (0006) refused a commit whose
-- lines did not balance. Every posting the product wrote was exactly that pair, so one row says
-- all they said: a debit and a credit of one amount balance by construction, and a check
-- constraint refuses an entry with no amount or with one account on both sides.
--
-- The lines cost every capture and refund two heap rows, two primary-key entries and two
-- entries in the account index, each naming the posting by its text id.
--
-- The conversion reads every posting's two lines and refuses to run if any posting has other
-- than one debit line and one credit line of one amount, on two accounts, in the posting's
-- currency (a fee line beside them would otherwise vanish from the books): the books
-- are not rewritten on a guess. On large books it rewrites every posting under the tables'
-- locks: run it in a quiet window.
ALTER TABLE ledger_postings
  ADD COLUMN debit_account  text,
  ADD COLUMN credit_account text,
  ADD COLUMN amount_minor   bigint;

UPDATE ledger_postings p
   SET debit_account = d.account, credit_account = c.account, amount_minor = d.debit_minor
  FROM ledger_lines d, ledger_lines c
 WHERE d.tenant_id = p.tenant_id AND d.posting_id = p.id AND d.debit_minor > 0
   AND d.currency = p.currency
   AND c.tenant_id = p.tenant_id AND c.posting_id = p.id AND c.credit_minor > 0
   AND c.currency = p.currency AND c.credit_minor = d.debit_minor;

DO $$
DECLARE
  odd text;
BEGIN
  SELECT p.id INTO odd
    FROM ledger_postings p
   WHERE p.amount_minor IS NULL
      OR p.debit_account = p.credit_account
      OR (SELECT count(*) FROM ledger_lines l
           WHERE l.tenant_id = p.tenant_id AND l.posting_id = p.id) <> 2
   LIMIT 1;
  IF odd IS NOT NULL THEN
    RAISE EXCEPTION 'ledger posting % is not one debit and one credit of one amount: not converted', odd
      USING ERRCODE = 'check_violation';
  END IF;
END;
$$;

ALTER TABLE ledger_postings
  ALTER COLUMN debit_account SET NOT NULL,
  ALTER COLUMN credit_account SET NOT NULL,
  ALTER COLUMN amount_minor SET NOT NULL,
  ADD CONSTRAINT ledger_postings_entry_ck
    CHECK (amount_minor > 0 AND debit_account <> credit_account);

DROP TABLE ledger_lines;
DROP FUNCTION ledger_posting_must_balance();
