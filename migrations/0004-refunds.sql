-- Refunds are payment operations too: several per payment, each with its own id, derived
-- provider key and status. The reason travels to the provider and back to the merchant.
ALTER TABLE payment_operations DROP CONSTRAINT payment_operations_kind_ck;
ALTER TABLE payment_operations
  ADD CONSTRAINT payment_operations_kind_ck CHECK (kind IN ('capture', 'cancel', 'refund'));
ALTER TABLE payment_operations ADD COLUMN reason text;
ALTER TABLE payment_operations
  ADD CONSTRAINT payment_operations_refund_amount_ck CHECK (kind <> 'refund' OR amount_minor IS NOT NULL);

CREATE INDEX payment_operations_payment_ix ON payment_operations (tenant_id, payment_id, kind);
