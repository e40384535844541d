-- The duplicate without a key (seed 002): a tenant may ask that no two of its live payments
-- share a `reference`, under any idempotency key. Off by default: merchants legitimately send
-- several payments under one order reference (split tenders, instalments, a payment per
-- shipment), so only a tenant whose references name one payment each may turn it on.
--
-- The setting is the payments service's own (payment_settings), read by the payment's INSERT.
-- A payment made while its tenant's guard is on carries its reference again in
-- guarded_reference, and the partial unique index admits one live payment per value. A payment
-- that ends FAILED or CANCELED gives the reference up (the statement that ends it sets
-- guarded_reference to NULL), so the merchant may pay the order again.
--
-- The index names guarded_reference and tenant_id only, never status: a column in an index or
-- its predicate makes every update of it a non-HOT update, and a payment's status changes in
-- every phase (fillfactor, migrations/0008, ADR 0016). The new column is NULL in every existing
-- row: no rewrite, and the index build finds nothing to index.
CREATE TABLE payment_settings (
  tenant_id        uuid        NOT NULL,
  reference_guard  boolean     NOT NULL DEFAULT false,
  updated_at       timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT payment_settings_pk PRIMARY KEY (tenant_id)
);
ALTER TABLE payments ADD COLUMN guarded_reference text;
CREATE UNIQUE INDEX payments_guarded_reference_uq
  ON payments (tenant_id, guarded_reference)
  WHERE guarded_reference IS NOT NULL;
