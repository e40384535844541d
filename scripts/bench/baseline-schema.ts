/**
 * The baselines' own tables, created by the bench on its scratch database (never a migration:
 * they are not the product's). Their payments tables have the product's columns, constraints
 * and indexes, so "the same payment work" costs the same on every side; what differs is only
 * what the baseline leaves out.
 */

function paymentsTable(name: string): string {
  return `
CREATE TABLE ${name} (
  tenant_id          uuid        NOT NULL,
  id                 uuid        NOT NULL,
  status             text        NOT NULL,
  amount_minor       bigint      NOT NULL CHECK (amount_minor > 0),
  currency           text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  payment_method     text        NOT NULL,
  reference          text,
  provider_key       text        NOT NULL,
  provider_reference text,
  failure_code       text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, provider_key)
);
CREATE INDEX ${name}_created_ix ON ${name} (tenant_id, created_at DESC, id DESC);
CREATE INDEX ${name}_reference_ix ON ${name} (tenant_id, reference);`;
}

export const BASELINE_SCHEMA = `
${paymentsTable('bench_bare_payments')}
${paymentsTable('bench_ref_payments')}
-- The reference's idempotency keys: one row per (tenant, key), claimed by INSERT ON CONFLICT.
CREATE TABLE bench_ref_keys (
  tenant_id    uuid        NOT NULL,
  key          text        NOT NULL,
  request_hash bytea       NOT NULL,
  state        text        NOT NULL CHECK (state IN ('started', 'finished')),
  payment_id   uuid        NOT NULL,
  response     jsonb,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, key)
);
-- The single-row commits pgbench runs (pgbench.ts).
CREATE TABLE bench_commits (id bigserial PRIMARY KEY, v text NOT NULL);`;
