-- The wake-up of waiters (0011) as an AFTER trigger (ADR 0063).
--
-- A BEFORE ROW UPDATE trigger makes PostgreSQL lock each row before updating it, so that the
-- trigger sees the version it will replace: a row lock, and a WAL record for it, on every update
-- of a key row, marked or not, whatever the trigger's WHEN clause then decides. Every phase and
-- every finish paid it.
--
-- An AFTER trigger takes no such lock. It cannot change the row, so the statements that hand a
-- request on (finish, release, takeover, claim: idempotency.sql.ts) clear `waiting` themselves,
-- and this trigger only notifies, under the same condition as before. A row updated some other
-- way (by hand) still notifies; its mark stays, and its next transition notifies again, which
-- only wakes a waiter to read the key once more.
--
-- An update that moves a row to another partition (a finish that moves expires_at past the
-- day's end) is a DELETE from one partition and an INSERT into the other, and fires no UPDATE
-- trigger. The BEFORE trigger fired for it; an AFTER DELETE trigger on marked rows does now.

DROP TRIGGER idempotency_keys_wake_waiters ON idempotency_keys;
DROP FUNCTION wake_key_waiters();

-- OLD for both events: a row's id never changes, and a DELETE has no NEW.
CREATE FUNCTION notify_key_waiters() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('idempotency_key_settled', OLD.id::text);
  RETURN NULL;
END
$$;

CREATE TRIGGER idempotency_keys_wake_waiters
  AFTER UPDATE ON idempotency_keys
  FOR EACH ROW
  WHEN (OLD.waiting AND (NEW.state <> OLD.state
                         OR NEW.fencing_token <> OLD.fencing_token
                         OR (NEW.lease_expires_at IS DISTINCT FROM OLD.lease_expires_at
                             AND (NEW.lease_expires_at IS NULL OR NEW.lease_expires_at <= now()))))
  EXECUTE FUNCTION notify_key_waiters();

CREATE TRIGGER idempotency_keys_wake_waiters_moved
  AFTER DELETE ON idempotency_keys
  FOR EACH ROW
  WHEN (OLD.waiting)
  EXECUTE FUNCTION notify_key_waiters();
