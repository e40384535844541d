-- Webhook endpoints a merchant manages (docs/api.md §2: webhookEndpoints, updateWebhookEndpoint,
-- deleteWebhookEndpoint, rotateWebhookSecret, webhookDeliveries, redeliverWebhookEvent).
--
-- event_types: the event types an endpoint receives; NULL receives every type. previous_secret:
-- after a rotation, the secret it replaced (sealed like `secret`), which keeps signing beside
-- the new one until previous_secret_expires_at, so a merchant can roll out the new secret
-- without rejecting a single delivery (Standard Webhooks allows several `v1,` signatures).
-- A deleted endpoint keeps its row (status 'deleted'): a registration's replay still finds what
-- it answered, and nothing is delivered to it.
--
-- Nullable columns without defaults, and updated_at with a constant default, are catalog
-- changes only: no rewrite.
ALTER TABLE webhook_endpoints
  ADD COLUMN event_types text[],
  ADD COLUMN previous_secret text,
  ADD COLUMN previous_secret_expires_at timestamptz,
  ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();

ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_status_ck;
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_status_ck
  CHECK (status IN ('enabled', 'disabled', 'deleted'));
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_previous_secret_ck
  CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL));

-- An endpoint's deliveries, page by page (webhookDeliveries). Partial: the ledger's and the
-- receipts' deliveries, the bulk of the table, carry no entry and pay nothing for it.
CREATE INDEX outbox_deliveries_webhook_ix
  ON outbox_deliveries (tenant_id, consumer, event_id)
  WHERE consumer LIKE 'webhook:%';
