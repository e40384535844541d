-- Tenants and their API keys. Only a SHA-256 of each key is stored: keys are 256-bit random
-- strings, so a fast hash is enough (no offline guessing), and a leaked table grants nothing.
CREATE TABLE tenants (
  id            uuid        NOT NULL,
  name          text        NOT NULL,
  api_key_hash  bytea       NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT tenants_pk PRIMARY KEY (id),
  CONSTRAINT tenants_name_uq UNIQUE (name),
  CONSTRAINT tenants_api_key_hash_uq UNIQUE (api_key_hash)
);

-- One row per scoped client key: (tenant, operation, key). The row is the durable memory of
-- what the key meant (request_hash), how far its work got (recovery_point), who may advance it
-- (fencing_token + lease) and what to answer on replay (response).
CREATE TABLE idempotency_keys (
  tenant_id         uuid        NOT NULL,
  operation         text        NOT NULL,
  key               text        NOT NULL,
  request_hash      bytea       NOT NULL,
  state             text        NOT NULL,
  recovery_point    text        NOT NULL,
  resource_id       uuid,
  -- Incremented by every takeover. Each phase commits only if the token it was admitted with
  -- is still current, so an owner that lost its lease (a zombie) cannot write.
  fencing_token     bigint      NOT NULL DEFAULT 1,
  lease_expires_at  timestamptz,
  -- Provider attempts that ended without a final answer (503, timeout); drives backoff.
  attempts          integer     NOT NULL DEFAULT 0,
  response          jsonb,
  response_version  smallint,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  expires_at        timestamptz NOT NULL,
  CONSTRAINT idempotency_keys_scope_pk PRIMARY KEY (tenant_id, operation, key),
  CONSTRAINT idempotency_keys_key_format_ck CHECK (key ~ '^[A-Za-z0-9._:-]{1,255}$'),
  CONSTRAINT idempotency_keys_state_ck CHECK (state IN ('started', 'finished')),
  CONSTRAINT idempotency_keys_finished_response_ck
    CHECK (state <> 'finished' OR (response IS NOT NULL AND lease_expires_at IS NULL))
);

-- The recovery worker's sweep: unfinished rows by lease expiry. Finished rows (nearly all of
-- them) are not in this index, so the sweep stays an index scan over the few that matter.
CREATE INDEX idempotency_keys_unfinished_lease_ix
  ON idempotency_keys (lease_expires_at)
  WHERE state <> 'finished';

-- Every committed phase, once. The primary key is the proof that no phase runs twice: a second
-- commit of the same recovery point for the same request fails on it and rolls the phase back.
CREATE TABLE idempotency_phase_log (
  tenant_id       uuid        NOT NULL,
  operation       text        NOT NULL,
  key             text        NOT NULL,
  recovery_point  text        NOT NULL,
  fencing_token   bigint      NOT NULL,
  committed_at    timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT idempotency_phase_log_pk PRIMARY KEY (tenant_id, operation, key, recovery_point)
);

-- Amounts are integers in the currency's minor unit; the decimal string is a view concern.
CREATE TABLE payments (
  tenant_id              uuid        NOT NULL,
  id                     uuid        NOT NULL,
  status                 text        NOT NULL,
  amount_minor           bigint      NOT NULL,
  currency               text        NOT NULL,
  amount_captured_minor  bigint      NOT NULL DEFAULT 0,
  amount_refunded_minor  bigint      NOT NULL DEFAULT 0,
  payment_method         text        NOT NULL,
  capture_method         text        NOT NULL,
  reference              text,
  description            text,
  metadata               jsonb,
  -- The derived provider idempotency key, written with the payment before any provider call:
  -- the durable intent. It is built from our payment id, never from the client's key.
  provider_key           text        NOT NULL,
  provider_reference     text,
  failure_code           text,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT payments_pk PRIMARY KEY (tenant_id, id),
  CONSTRAINT payments_provider_key_uq UNIQUE (tenant_id, provider_key),
  CONSTRAINT payments_status_ck
    CHECK (status IN ('PROCESSING', 'REQUIRES_CAPTURE', 'SUCCEEDED', 'FAILED', 'CANCELED')),
  CONSTRAINT payments_capture_method_ck CHECK (capture_method IN ('AUTOMATIC', 'MANUAL')),
  CONSTRAINT payments_amount_ck CHECK (amount_minor > 0),
  CONSTRAINT payments_currency_ck CHECK (currency ~ '^[A-Z]{3}$')
);

CREATE INDEX payments_tenant_created_ix ON payments (tenant_id, created_at DESC, id DESC);
CREATE INDEX payments_tenant_reference_ix
  ON payments (tenant_id, reference, created_at DESC, id DESC)
  WHERE reference IS NOT NULL;
