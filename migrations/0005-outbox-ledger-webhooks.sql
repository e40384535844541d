-- Transactional outbox: an event is written in the same transaction as the phase that makes it
-- true, with one delivery row per consumer. Consumers see every event at least once; each one's
-- effect is made exactly-once by its own identity (ledger posting id, receipt id, inbox row).
CREATE TABLE outbox_events (
  tenant_id   uuid        NOT NULL,
  -- Stable across every redelivery: it is the webhook-id merchants deduplicate on.
  id          text        NOT NULL,
  type        text        NOT NULL,
  payload     jsonb       NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT outbox_events_pk PRIMARY KEY (tenant_id, id)
);

CREATE TABLE outbox_deliveries (
  tenant_id        uuid        NOT NULL,
  event_id         text        NOT NULL,
  -- 'ledger', 'receipts', or 'webhook:<endpoint id>'.
  consumer         text        NOT NULL,
  status           text        NOT NULL DEFAULT 'pending',
  attempts         integer     NOT NULL DEFAULT 0,
  -- Due time, and the claim lease of a dispatcher working on it (pushed forward on claim).
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  last_error       text,
  delivered_at     timestamptz,
  CONSTRAINT outbox_deliveries_pk PRIMARY KEY (tenant_id, event_id, consumer),
  CONSTRAINT outbox_deliveries_event_fk FOREIGN KEY (tenant_id, event_id) REFERENCES outbox_events (tenant_id, id),
  CONSTRAINT outbox_deliveries_status_ck CHECK (status IN ('pending', 'delivered', 'abandoned'))
);
CREATE INDEX outbox_deliveries_due_ix ON outbox_deliveries (next_attempt_at) WHERE status = 'pending';

-- A consumer's memory of the messages whose effect it has made, written in the same transaction
-- as the effect: a duplicate or late redelivery finds its row and does nothing.
CREATE TABLE inbox_messages (
  consumer      text        NOT NULL,
  tenant_id     uuid        NOT NULL,
  message_id    text        NOT NULL,
  processed_at  timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT inbox_messages_pk PRIMARY KEY (consumer, tenant_id, message_id)
);

-- Double-entry ledger. A posting's id is its stable identity (ledger_payment_<id>_capture,
-- ledger_refund_<id>): posting it again is a no-op. Its lines balance (checked on insert).
CREATE TABLE ledger_postings (
  tenant_id     uuid        NOT NULL,
  id            text        NOT NULL,
  payment_id    uuid        NOT NULL,
  kind          text        NOT NULL,
  currency      text        NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT ledger_postings_pk PRIMARY KEY (tenant_id, id),
  CONSTRAINT ledger_postings_kind_ck CHECK (kind IN ('capture', 'refund'))
);

CREATE TABLE ledger_lines (
  tenant_id     uuid     NOT NULL,
  posting_id    text     NOT NULL,
  line          smallint NOT NULL,
  account       text     NOT NULL,
  debit_minor   bigint   NOT NULL DEFAULT 0,
  credit_minor  bigint   NOT NULL DEFAULT 0,
  currency      text     NOT NULL,
  CONSTRAINT ledger_lines_pk PRIMARY KEY (tenant_id, posting_id, line),
  CONSTRAINT ledger_lines_posting_fk FOREIGN KEY (tenant_id, posting_id) REFERENCES ledger_postings (tenant_id, id),
  CONSTRAINT ledger_lines_one_side_ck CHECK ((debit_minor > 0) <> (credit_minor > 0) AND debit_minor >= 0 AND credit_minor >= 0)
);
CREATE INDEX ledger_lines_account_ix ON ledger_lines (tenant_id, account, currency);

CREATE TABLE webhook_endpoints (
  tenant_id        uuid        NOT NULL,
  id               uuid        NOT NULL,
  url              text        NOT NULL,
  -- The Standard Webhooks signing secret (whsec_…). Shown to the merchant once, at registration.
  secret           text        NOT NULL,
  status           text        NOT NULL DEFAULT 'enabled',
  disabled_reason  text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT webhook_endpoints_pk PRIMARY KEY (tenant_id, id),
  CONSTRAINT webhook_endpoints_status_ck CHECK (status IN ('enabled', 'disabled'))
);

-- Email receipts (a sink): one per payment, whatever the number of deliveries.
CREATE TABLE receipts (
  tenant_id    uuid        NOT NULL,
  id           text        NOT NULL,
  payment_id   uuid        NOT NULL,
  event_id     text        NOT NULL,
  recorded_at  timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT receipts_pk PRIMARY KEY (tenant_id, id)
);
