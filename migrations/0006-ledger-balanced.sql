-- The books balance at all times, not only when the code is right: at commit, every posting
-- touched by the transaction must have equal debits and credits, or the commit fails.
CREATE FUNCTION ledger_posting_must_balance() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  imbalance bigint;
BEGIN
  SELECT sum(debit_minor) - sum(credit_minor) INTO imbalance
    FROM ledger_lines WHERE tenant_id = NEW.tenant_id AND posting_id = NEW.posting_id;
  IF imbalance <> 0 THEN
    RAISE EXCEPTION 'ledger posting % does not balance (debits - credits = %)', NEW.posting_id, imbalance
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER ledger_lines_posting_balanced
  AFTER INSERT OR UPDATE ON ledger_lines
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION ledger_posting_must_balance();
