-- Deliveries only for consumers that exist (ADR 0009).
--
-- Every payment event wrote a delivery for the webhook fan-out, which then found no endpoint
-- for most tenants: a row written, claimed, run in a transaction and marked delivered, to do
-- nothing. A consumer that only some tenants have is now written only for a tenant subscribed
-- to it. Subscriptions are added, never removed: a tenant that once registered an endpoint
-- keeps the fan-out, which decides per event which endpoints are enabled and subscribed to its
-- type. An event committed before a tenant's first endpoint is not delivered to it, as an
-- endpoint receives the events that happen after it exists.
CREATE TABLE outbox_subscriptions (
  tenant_id   uuid        NOT NULL,
  consumer    text        NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT outbox_subscriptions_pk PRIMARY KEY (tenant_id, consumer)
);

INSERT INTO outbox_subscriptions (tenant_id, consumer)
SELECT DISTINCT tenant_id, 'webhooks' FROM webhook_endpoints;
