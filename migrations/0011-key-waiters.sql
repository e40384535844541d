-- Waiting for a key in flight (`Prefer: wait=N`, docs/api.md §1; ADR 0021).
--
-- A duplicate that may wait marks the key row (`waiting`) and listens on one connection per
-- gateway. The first request's transition wakes it: when a marked row leaves its owner's hands
-- (finished, unknown, its lease given back or taken over; not a lease renewed by a phase that
-- advances), this trigger sends the row's id on
-- `idempotency_key_settled` and clears the mark. PostgreSQL delivers a NOTIFY only when its
-- transaction commits, so a waiter never wakes to an answer that could still roll back.
--
-- Only marked rows notify: a transaction that sends NOTIFY takes a database-wide lock at
-- commit to queue it, which would serialise every payment's commit if each one notified.
--
-- A boolean NOT NULL with a constant default is a catalog change only (no partition is
-- rewritten), so this is safe on a live table of any size.
ALTER TABLE idempotency_keys ADD COLUMN waiting boolean NOT NULL DEFAULT false;

COMMENT ON COLUMN idempotency_keys.waiting IS
  'a duplicate waits for this request (Prefer: wait): its next transition notifies idempotency_key_settled';

CREATE FUNCTION wake_key_waiters() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('idempotency_key_settled', NEW.id::text);
  NEW.waiting := false;
  RETURN NEW;
END
$$;

-- The WHEN clause is evaluated before the function is called, so an unmarked row (every row
-- but a waited-for one) costs a comparison, not a call.
CREATE TRIGGER idempotency_keys_wake_waiters
  BEFORE UPDATE ON idempotency_keys
  FOR EACH ROW
  WHEN (OLD.waiting AND (NEW.state <> OLD.state
                         OR NEW.fencing_token <> OLD.fencing_token
                         OR (NEW.lease_expires_at IS DISTINCT FROM OLD.lease_expires_at
                             AND (NEW.lease_expires_at IS NULL OR NEW.lease_expires_at <= now()))))
  EXECUTE FUNCTION wake_key_waiters();
