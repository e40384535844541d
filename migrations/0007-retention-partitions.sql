-- Retention by time partitions. Keys are remembered for the replay window (expires_at), their
-- metadata longer (IDEMPOTENCY_METADATA_RETENTION_SECONDS after expires_at), and both are
-- forgotten by dropping whole partitions, never by mass DELETE.
--
-- PostgreSQL refuses a unique constraint on a partitioned table that omits the partition key,
-- so (tenant, operation, key) can no longer be the primary key. Adding expires_at to it would
-- let a retry whose row falls in another partition run twice. Instead admission takes a
-- transaction-scoped advisory lock on the scope and inserts only if no live row exists in any
-- partition (idempotency.sql.ts, LOCK_SCOPE and INSERT_KEY). "Live" is: unfinished, or finished
-- and not yet expired. Expired finished rows stay as metadata until their partition goes.
--
-- Every row has a surrogate request id: a scope may hold several generations over time (each
-- expired one, then the current one), and the phase log and stored responses belong to one.
-- The partitions themselves are created ahead and dropped behind by the retention job
-- (services/kernel/idempotency/retention.ts); this migration creates one initial partition per
-- table wide enough for every existing row.

CREATE TABLE idempotency_partitions (
  name         text        NOT NULL,
  parent       text        NOT NULL,
  lower_bound  timestamptz NOT NULL,
  upper_bound  timestamptz NOT NULL,
  CONSTRAINT idempotency_partitions_pk PRIMARY KEY (name),
  CONSTRAINT idempotency_partitions_parent_ck
    CHECK (parent IN ('idempotency_keys', 'idempotency_phase_log', 'idempotency_responses')),
  CONSTRAINT idempotency_partitions_bounds_ck CHECK (lower_bound < upper_bound)
);

CREATE SEQUENCE idempotency_request_id_seq AS bigint;

ALTER TABLE idempotency_keys RENAME TO idempotency_keys_v1;
ALTER INDEX idempotency_keys_scope_pk RENAME TO idempotency_keys_v1_pk;
ALTER INDEX idempotency_keys_unfinished_lease_ix RENAME TO idempotency_keys_v1_unfinished_ix;
ALTER TABLE idempotency_phase_log RENAME TO idempotency_phase_log_v1;
ALTER INDEX idempotency_phase_log_pk RENAME TO idempotency_phase_log_v1_pk;

CREATE TABLE idempotency_keys (
  id                    bigint      NOT NULL DEFAULT nextval('idempotency_request_id_seq'),
  tenant_id             uuid        NOT NULL,
  operation             text        NOT NULL,
  key                   text        NOT NULL,
  request_hash          bytea       NOT NULL,
  state                 text        NOT NULL,
  recovery_point        text        NOT NULL,
  resource_id           uuid,
  fencing_token         bigint      NOT NULL DEFAULT 1,
  lease_expires_at      timestamptz,
  attempts              integer     NOT NULL DEFAULT 0,
  next_attempt_at       timestamptz,
  last_attempt_at       timestamptz,
  last_attempt_outcome  text,
  -- A short summary of the stored answer (a payment status, an error code) that outlives the
  -- body: what an operator can still learn about a key after its replay window.
  outcome               text,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  -- The end of the replay window, and the partition key. It only ever moves later: a request
  -- that finishes is replayable for a whole window after its answer was stored, and the
  -- retention job moves an unfinished row forward rather than drop it with its partition.
  expires_at            timestamptz NOT NULL,
  CONSTRAINT idempotency_keys_pk PRIMARY KEY (id, expires_at),
  CONSTRAINT idempotency_keys_key_format_ck CHECK (key ~ '^[A-Za-z0-9._:-]{1,255}$'),
  CONSTRAINT idempotency_keys_state_ck CHECK (state IN ('started', 'unknown', 'finished')),
  CONSTRAINT idempotency_keys_finished_ck
    CHECK (state <> 'finished' OR (outcome IS NOT NULL AND lease_expires_at IS NULL))
) PARTITION BY RANGE (expires_at);

-- Admission's lookup of a scope, newest generation first. Not unique: see the header.
CREATE INDEX idempotency_keys_scope_ix ON idempotency_keys (tenant_id, operation, key, expires_at);

-- The recovery worker's sweep: unfinished rows by lease expiry. Finished rows (nearly all of
-- them) are not in this index, so the sweep stays an index scan over the few that matter.
CREATE INDEX idempotency_keys_unfinished_lease_ix
  ON idempotency_keys (lease_expires_at)
  WHERE state <> 'finished';

-- Every committed phase of one request, once: the primary key refuses a second commit of the
-- same recovery point. expires_at is the request's at the time of the phase (the partition key).
CREATE TABLE idempotency_phase_log (
  request_id      bigint      NOT NULL,
  tenant_id       uuid        NOT NULL,
  operation       text        NOT NULL,
  key             text        NOT NULL,
  recovery_point  text        NOT NULL,
  fencing_token   bigint      NOT NULL,
  committed_at    timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  CONSTRAINT idempotency_phase_log_pk PRIMARY KEY (request_id, recovery_point, expires_at)
) PARTITION BY RANGE (expires_at);

-- Stored answers, kept only for the replay window: a partition goes as soon as every answer in
-- it has expired. 'inline' holds the body; 'reference' (a body over the size cap) holds none and
-- a replay renders the request's resource instead.
CREATE TABLE idempotency_responses (
  request_id  bigint      NOT NULL,
  expires_at  timestamptz NOT NULL,
  version     smallint    NOT NULL,
  stored_as   text        NOT NULL,
  body        jsonb,
  CONSTRAINT idempotency_responses_pk PRIMARY KEY (request_id, expires_at),
  CONSTRAINT idempotency_responses_stored_as_ck CHECK (
    (stored_as = 'inline' AND body IS NOT NULL) OR (stored_as = 'reference' AND body IS NULL))
) PARTITION BY RANGE (expires_at);

-- One initial partition per table, from the beginning of time to a day past every existing
-- row's expiry; the retention job extends from its upper bound and drops it once it is old.
DO $$
DECLARE
  upper_bound timestamptz;
  parent text;
BEGIN
  SELECT date_trunc('day', greatest(now(), max(expires_at))) + interval '1 day'
    INTO upper_bound
    FROM idempotency_keys_v1;
  FOREACH parent IN ARRAY ARRAY['idempotency_keys', 'idempotency_phase_log', 'idempotency_responses']
  LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                   parent || '_initial', parent, '-infinity', upper_bound);
    INSERT INTO idempotency_partitions (name, parent, lower_bound, upper_bound)
    VALUES (parent || '_initial', parent, '-infinity', upper_bound);
  END LOOP;
END $$;

INSERT INTO idempotency_keys
       (tenant_id, operation, key, request_hash, state, recovery_point, resource_id,
        fencing_token, lease_expires_at, attempts, next_attempt_at, last_attempt_at,
        last_attempt_outcome, outcome, created_at, updated_at, expires_at)
SELECT tenant_id, operation, key, request_hash, state, recovery_point, resource_id,
       fencing_token, lease_expires_at, attempts, next_attempt_at, last_attempt_at,
       last_attempt_outcome,
       CASE WHEN state = 'finished'
            THEN coalesce(response #>> '{error,code}', response #>> '{payment,status}', 'completed')
       END,
       created_at,
       updated_at, expires_at
  FROM idempotency_keys_v1;

INSERT INTO idempotency_responses (request_id, expires_at, version, stored_as, body)
SELECT k.id, k.expires_at, v1.response_version, 'inline', v1.response
  FROM idempotency_keys_v1 v1
  JOIN idempotency_keys k USING (tenant_id, operation, key)
 WHERE v1.state = 'finished';

INSERT INTO idempotency_phase_log
       (request_id, tenant_id, operation, key, recovery_point, fencing_token, committed_at, expires_at)
SELECT k.id, l.tenant_id, l.operation, l.key, l.recovery_point, l.fencing_token, l.committed_at,
       k.expires_at
  FROM idempotency_phase_log_v1 l
  JOIN idempotency_keys k USING (tenant_id, operation, key);

DROP TABLE idempotency_phase_log_v1;
DROP TABLE idempotency_keys_v1;
