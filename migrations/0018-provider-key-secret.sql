-- The secret that provider idempotency keys are derived under (services/payments/provider-keys.ts,
-- ADR 0029). A provider key is an HMAC of the logical request (tenant, operation, the client's
-- idempotency key, the normalised command) under this secret, so that a client's retry presents
-- the same provider key even when the rows written for the first attempt are gone (a failover
-- with asynchronous replication, a restore from backup): the provider answers with the charge
-- it already made instead of making a second one. Keyed, so the client's key never reaches the
-- provider in clear and cannot be confirmed by guessing.
--
-- One row, written once here and never changed: a new secret would give every request in flight
-- a new provider key. 32 random bytes from two v4 UUIDs (244 random bits; gen_random_uuid is
-- core PostgreSQL and draws from the server's strong random source).
CREATE TABLE provider_key_secret (
  id         smallint    NOT NULL DEFAULT 1,
  secret     bytea       NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT provider_key_secret_pk PRIMARY KEY (id),
  CONSTRAINT provider_key_secret_one_row CHECK (id = 1),
  CONSTRAINT provider_key_secret_length CHECK (octet_length(secret) = 32)
);

INSERT INTO provider_key_secret (secret)
VALUES (uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()));
