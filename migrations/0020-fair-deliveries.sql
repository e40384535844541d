-- Fair delivery to remote targets (lib/outbox/remote-deliveries.ts, ADR 0039). A consumer named
-- `kind:target` (webhook:<endpoint>) reaches something outside the database, slow or dead at
-- will; every other consumer is the database's own work. The two are claimed apart, each through
-- its own partial index, so that work for the database never queues behind a remote backlog.
-- Each pending row is in exactly one of the two indexes: no more index writes than the one index
-- they replace.
--
-- Remote: a claim visits the tenants that have pending remote rows, one index probe each (a
-- loose scan on the leading column), then takes each tenant's due rows in order. A tenant with a
-- million pending rows is one probe, as is a tenant with one.
CREATE INDEX outbox_deliveries_remote_due_ix
  ON outbox_deliveries (tenant_id, next_attempt_at)
  WHERE status = 'pending' AND strpos(consumer, ':') > 0;
CREATE INDEX outbox_deliveries_local_due_ix
  ON outbox_deliveries (next_attempt_at)
  WHERE status = 'pending' AND strpos(consumer, ':') = 0;
DROP INDEX outbox_deliveries_due_ix;

-- A remote target's circuit (one row per target failing now): after a failure the target is
-- left alone until open_until, each consecutive failure doubling the wait, and its other pending
-- deliveries wait with it instead of each spending a sender slot on a timeout. After open_until
-- one delivery probes it. A success deletes the row.
CREATE TABLE outbox_consumer_circuits (
  tenant_id uuid NOT NULL,
  consumer text NOT NULL,
  failures integer NOT NULL,
  open_until timestamptz NOT NULL,
  CONSTRAINT outbox_consumer_circuits_pk PRIMARY KEY (tenant_id, consumer),
  CONSTRAINT outbox_consumer_circuits_failures_ck CHECK (failures > 0)
);
