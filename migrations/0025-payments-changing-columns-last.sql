-- The columns a payment's updates change come last in its row (ADR 0059). An update that stays
-- on its page (nearly all of them, by the fillfactor of 0008) writes to the WAL only the bytes of
-- the new row that differ from the old one between the longest equal prefix and the longest
-- equal suffix. With status third and version last, the provider's answer logged nearly the whole
-- row: ids, amounts, method, provider key, reference, description and metadata again. Now the
-- columns set once, at insert, come first, then the rarely changed ones, then those every
-- answer changes.
--
-- PostgreSQL cannot reorder columns, so the table is rebuilt: copied under its exclusive lock,
-- with every index and constraint recreated under its old name and the foreign key of
-- payment_operations pointed at the new table. On a large table the copy and the index builds
-- hold that lock for their whole length: run this migration in a quiet window. Columns added to
-- payments later land at the end, among the changing ones: a column set once belongs before
-- created_at, which takes another rebuild.
-- Both tables at once, in the order the payment phases lock them: taking payment_operations
-- later, for its foreign key, could deadlock with a phase that holds it and waits for payments.
LOCK TABLE payments, payment_operations IN ACCESS EXCLUSIVE MODE;

CREATE TABLE payments_rebuilt (
  -- Set once, at insert.
  tenant_id              uuid        NOT NULL,
  id                     uuid        NOT NULL,
  amount_minor           bigint      NOT NULL,
  currency               text        NOT NULL,
  payment_method         text        NOT NULL,
  capture_method         text        NOT NULL,
  -- The derived provider idempotency key, written with the payment before any provider call:
  -- the durable intent. It is built from our payment id, never from the client's key.
  provider_key           text        NOT NULL,
  reference              text,
  description            text,
  metadata               jsonb,
  created_at             timestamptz NOT NULL DEFAULT now(),
  -- Changed by a refund, or by a tenant's reference guard and a payment that fails or is
  -- canceled.
  guarded_reference      text,
  amount_refunded_minor  bigint      NOT NULL DEFAULT 0,
  -- Changed by the provider's answer and by a capture or a cancel.
  status                 text        NOT NULL,
  amount_captured_minor  bigint      NOT NULL DEFAULT 0,
  provider_reference     text,
  failure_code           text,
  -- Changed by every update.
  version                integer     NOT NULL DEFAULT 1,
  updated_at             timestamptz NOT NULL DEFAULT now()
) WITH (fillfactor = 80);

INSERT INTO payments_rebuilt
       (tenant_id, id, amount_minor, currency, payment_method, capture_method, provider_key,
        reference, description, metadata, created_at, guarded_reference, amount_refunded_minor,
        status, amount_captured_minor, provider_reference, failure_code, version, updated_at)
SELECT tenant_id, id, amount_minor, currency, payment_method, capture_method, provider_key,
       reference, description, metadata, created_at, guarded_reference, amount_refunded_minor,
       status, amount_captured_minor, provider_reference, failure_code, version, updated_at
  FROM payments;

ALTER TABLE payment_operations DROP CONSTRAINT payment_operations_payment_fk;
DROP TABLE payments;
ALTER TABLE payments_rebuilt RENAME TO payments;

ALTER TABLE payments
  ADD CONSTRAINT payments_pk PRIMARY KEY (tenant_id, id),
  ADD CONSTRAINT payments_provider_key_uq EXCLUDE USING hash (provider_key WITH =),
  ADD CONSTRAINT payments_status_ck
    CHECK (status IN ('PROCESSING', 'REQUIRES_CAPTURE', 'SUCCEEDED', 'FAILED', 'CANCELED')),
  ADD CONSTRAINT payments_capture_method_ck CHECK (capture_method IN ('AUTOMATIC', 'MANUAL')),
  ADD CONSTRAINT payments_amount_ck CHECK (amount_minor > 0),
  ADD CONSTRAINT payments_currency_ck CHECK (currency ~ '^[A-Z]{3}$');

CREATE INDEX payments_tenant_created_ix ON payments (tenant_id, created_at DESC, id DESC);
CREATE INDEX payments_tenant_reference_ix
  ON payments (tenant_id, reference, created_at DESC, id DESC)
  WHERE reference IS NOT NULL;
CREATE UNIQUE INDEX payments_guarded_reference_uq
  ON payments (tenant_id, guarded_reference)
  WHERE guarded_reference IS NOT NULL;

ALTER TABLE payment_operations
  ADD CONSTRAINT payment_operations_payment_fk
  FOREIGN KEY (tenant_id, payment_id) REFERENCES payments (tenant_id, id);

-- The planner's statistics went with the old table. No ANALYZE here: autovacuum analyzes the new
-- one soon, since every row in it was just written. On an empty table an ANALYZE would record
-- zero rows, and an empty database's generic plans would then choose among indexes by a tie.
