-- Operations on an existing payment (capture, cancel; refunds later). Each has its own id, minted
-- by the request that creates it: the provider key is derived from it, and an admission whose
-- commit is in doubt recognises its own row by it.
CREATE TABLE payment_operations (
  tenant_id           uuid        NOT NULL,
  id                  uuid        NOT NULL,
  payment_id          uuid        NOT NULL,
  kind                text        NOT NULL,
  amount_minor        bigint,
  status              text        NOT NULL,
  provider_key        text        NOT NULL,
  provider_reference  text,
  failure_code        text,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT payment_operations_pk PRIMARY KEY (tenant_id, id),
  CONSTRAINT payment_operations_provider_key_uq UNIQUE (tenant_id, provider_key),
  CONSTRAINT payment_operations_payment_fk FOREIGN KEY (tenant_id, payment_id) REFERENCES payments (tenant_id, id),
  CONSTRAINT payment_operations_kind_ck CHECK (kind IN ('capture', 'cancel')),
  CONSTRAINT payment_operations_status_ck CHECK (status IN ('PROCESSING', 'SUCCEEDED', 'FAILED')),
  CONSTRAINT payment_operations_amount_ck CHECK (amount_minor IS NULL OR amount_minor > 0)
);

-- A payment is captured or canceled once: a capture racing a cancel (or a second capture under
-- another key) has exactly one winner, decided by this index, not by application code.
CREATE UNIQUE INDEX payment_operations_one_settlement_uq
  ON payment_operations (tenant_id, payment_id)
  WHERE kind IN ('capture', 'cancel') AND status <> 'FAILED';
