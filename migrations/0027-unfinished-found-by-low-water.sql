-- Unfinished requests found without an index on their state, so that a key row's finish is a
-- heap-only update (ADR 0062).
--
-- The partial index of unfinished rows by lease (0007) holds `state` in its predicate and the
-- lease in its key. Every finish changes both, so no finish could be heap-only: each one wrote
-- the row again in full, with new entries in the primary key and the scope index, and left the
-- admitted version dead.
--
-- Instead, every unfinished request has an id at or above idempotency_low_water.low_water, or is
-- listed in idempotency_parked. Ids come from a sequence, so the rows at or above the mark are
-- the ones admitted since it, and the primary key, led by id, reads them. The recovery sweep
-- moves the mark up (lib/idempotency/low-water.sql.ts) and parks each unfinished row it passes; the
-- view idempotency_unfinished_keys is the union of both, and is what every reader of unfinished
-- requests reads.
--
-- The mark may only pass an id once the row with that id, if any, is committed: a row still
-- being inserted is invisible, and passing it unparked would lose it. So an id is taken only
-- after its transaction has an xid (idempotency_next_request_id). A sweep reads the sequence's
-- position before its own transaction has an xid, and a later sweep moves the mark to that
-- position only once every transaction with an xid below that sweep's has ended. The
-- sequence must keep CACHE 1: with a cache, a session hands out ids from a block of its own,
-- after the sweep read a later position.

CREATE FUNCTION idempotency_next_request_id() RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  -- The xid first: a transaction holding an id below the sweep's reading of the sequence then
  -- holds an xid below the next one the sweep sees assigned.
  PERFORM pg_current_xact_id();
  RETURN nextval('idempotency_request_id_seq');
END $$;

-- Held to the end of the migration: no admission may be in progress while the unfinished
-- requests are parked below.
LOCK TABLE idempotency_keys IN ACCESS EXCLUSIVE MODE;

ALTER TABLE idempotency_keys ALTER COLUMN id SET DEFAULT idempotency_next_request_id();

CREATE TABLE idempotency_low_water (
  only_row        boolean NOT NULL DEFAULT true,
  -- Every unfinished request has an id at or above this, or is parked.
  low_water       bigint  NOT NULL,
  -- The next mark: the first id the sequence had not handed out when a sweep read it, and the
  -- xid that sweep got just after. Once every transaction below that xid has ended, every id
  -- below the next mark belongs to a committed row, or to none.
  next_low_water  bigint  NOT NULL,
  next_after      xid8    NOT NULL,
  CONSTRAINT idempotency_low_water_pk PRIMARY KEY (only_row),
  CONSTRAINT idempotency_low_water_one_row_ck CHECK (only_row = true),
  CONSTRAINT idempotency_low_water_order_ck CHECK (low_water <= next_low_water)
) WITH (fillfactor = 50);

-- Unfinished requests below the mark: those still unfinished when the mark passed them (a slow
-- provider, an unknown outcome, a backoff). The sweep removes each one once it has finished.
CREATE TABLE idempotency_parked (
  request_id  bigint NOT NULL,
  CONSTRAINT idempotency_parked_pk PRIMARY KEY (request_id)
);

-- Every unfinished request is parked, and the mark starts at the sequence's next id. Under the
-- lock above no admission is in progress, and this statement sees every row. The lease index
-- still exists here, and finds the unfinished rows without reading the finished.
INSERT INTO idempotency_parked (request_id)
SELECT id FROM idempotency_keys WHERE state <> 'finished';

INSERT INTO idempotency_low_water (low_water, next_low_water, next_after)
SELECT n.next_id, n.next_id, pg_current_xact_id()
  FROM (SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END AS next_id
          FROM idempotency_request_id_seq) AS n;

-- The parked ones are read from the list, each key by its id (LATERAL with a LIMIT, which the
-- planner cannot turn into a join that reads every key below the mark). A parked id is always
-- below the mark, so the two halves never name one row twice.
CREATE VIEW idempotency_unfinished_keys AS
SELECT k.*
  FROM idempotency_keys k
 WHERE k.id >= (SELECT low_water FROM idempotency_low_water) AND k.state <> 'finished'
UNION ALL
SELECT k.*
  FROM idempotency_parked p
 CROSS JOIN LATERAL (SELECT * FROM idempotency_keys k
                      WHERE k.id = p.request_id AND k.state <> 'finished'
                      LIMIT 1) k
 WHERE p.request_id < (SELECT low_water FROM idempotency_low_water);

DROP INDEX idempotency_keys_unfinished_lease_ix;
