-- A check that fails its statement. A transaction sent with its COMMIT in one round trip
-- (withOneRoundTrip, services/kernel/db/pool.ts) cannot look at an answer and decide to roll
-- back: by the time the answer arrives, COMMIT has run. So each condition the transaction depends on
-- (the key was admitted, the fence held, the payment was still PROCESSING) is written into
-- the statement that establishes it, and an unmet one raises: PostgreSQL then skips every
-- later statement of the round trip, COMMIT included, and the transaction rolls back whole.
-- The SQLSTATE names the condition (class PW, see services/kernel/db/failed-checks.ts); the
-- message is for people. Returns true, so it can stand in a WHERE clause or a target list.
CREATE FUNCTION fail_unless(ok boolean, sqlstate text, message text) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message;
  END IF;
  RETURN true;
END
$$;
