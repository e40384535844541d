-- The ledger and receipts read the event log through a cursor each, instead of a delivery row
-- per event. A delivery row was inserted with its event, rewritten by its claim and again by its
-- mark: most of the outbox's WAL and statement time, for consumers that are in this database and
-- take whole batches. Delivery rows stay for webhooks (each endpoint its own retries and its own
-- record merchants can see), and for any log event a consumer fails to take (the retry queue).
--
-- Gap-safety: the log is read in the order of the writing transaction's id (written_by), and only
-- below the oldest transaction still running (pg_snapshot_xmin). Every transaction under it has
-- committed or aborted, so no event can later appear behind a cursor that has passed it; a
-- sequence read in commit order would have no such bound (a lower number can commit later).
--
-- Events written before this migration have no written_by and no log consumers: their delivery
-- rows deliver them. None of these changes rewrites the table.
ALTER TABLE outbox_events ADD COLUMN written_by xid8;
ALTER TABLE outbox_events ALTER COLUMN written_by SET DEFAULT pg_current_xact_id();
CREATE SEQUENCE outbox_events_log_seq AS bigint;
ALTER TABLE outbox_events ADD COLUMN log_seq bigint;
ALTER TABLE outbox_events ALTER COLUMN log_seq SET DEFAULT nextval('outbox_events_log_seq');
-- The consumers that read this event from the log (those with a cursor when it was written).
ALTER TABLE outbox_events ADD COLUMN log_consumers text[] NOT NULL DEFAULT '{}';
CREATE INDEX outbox_events_log_ix ON outbox_events (written_by, log_seq) WHERE log_consumers <> '{}';

-- One row per consumer that reads the log: the last event it has taken, and the lease of the
-- dispatcher taking the next batch (claim counts the claims: an advance by a dispatcher whose
-- lease another has since taken over changes nothing). Updated in place on every batch, so its
-- page keeps room for heap-only versions.
CREATE TABLE outbox_cursors (
  consumer       text        NOT NULL,
  written_by     xid8        NOT NULL DEFAULT '0',
  log_seq        bigint      NOT NULL DEFAULT 0,
  claim          bigint      NOT NULL DEFAULT 0,
  claimed_until  timestamptz NOT NULL DEFAULT '-infinity',
  CONSTRAINT outbox_cursors_pk PRIMARY KEY (consumer)
) WITH (fillfactor = 50);
INSERT INTO outbox_cursors (consumer) VALUES ('ledger'), ('receipts');
