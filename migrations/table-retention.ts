/**
 * How long every table of the schema keeps its rows, and what removes them (ADR 0037, ADR 0069).
 * A table either has a retention, is the books, or holds a number of rows that does not grow
 * with traffic. test/integration/table-retention.test.ts migrates an empty database and fails
 * when a table exists that is not listed here, or one listed here does not exist: a migration
 * that adds a table says here how it stays bounded.
 *
 * Partitions are not listed: they are their parent's rows, and go as the parent's entry says.
 */
export type RetentionKind =
  /** Past a window, then deleted by a job, by partition or in bounded batches. */
  | 'window'
  /** Kept for good: what was charged and owed, or an operator's decision about money. */
  | 'books'
  /** As many rows as there are tenants, keys, endpoints, partitions or migrations. */
  | 'configuration'
  /** A few rows, or as many as the requests or targets in trouble now. */
  | 'bounded';

export interface TableRetention {
  kind: RetentionKind;
  /** How long a row stays, and what removes it. */
  kept: string;
}

export const TABLE_RETENTION: Readonly<Record<string, TableRetention>> = {
  idempotency_keys: {
    kind: 'window',
    kept:
      'the replay window, then IDEMPOTENCY_METADATA_RETENTION_SECONDS; whole partitions dropped ' +
      '(lib/idempotency/retention.ts). An unfinished request is moved to a live partition, never dropped',
  },
  idempotency_responses: {
    kind: 'window',
    kept: 'the replay window; whole partitions dropped once every answer in them has expired',
  },
  idempotency_phase_log: {
    kind: 'window',
    kept: "as its request's key row; an unfinished request's rows follow it to its partition",
  },
  outbox_events: {
    kind: 'window',
    kept:
      'OUTBOX_RETENTION_SECONDS, never while a delivery is pending or a log consumer has yet to ' +
      'read the event; batches of 500 (lib/outbox/outbox-retention.ts)',
  },
  outbox_deliveries: {
    kind: 'window',
    kept: 'as its event; a pending delivery is never deleted',
  },
  inbox_messages: {
    kind: 'window',
    kept: 'OUTBOX_RETENTION_SECONDS, in the same batches (no consumer writes one since ADR 0049)',
  },
  payments: { kind: 'books', kept: 'for good: what was charged' },
  payment_operations: { kind: 'books', kept: 'for good: captures, refunds and cancels' },
  ledger_postings: { kind: 'books', kept: 'for good: what is owed, each posting with its entry' },
  receipts: { kind: 'books', kept: 'for good: what a merchant was told' },
  idempotency_interventions: {
    kind: 'books',
    kept: "for good: an operator's decisions about money, for audit",
  },
  tenants: { kind: 'configuration', kept: 'a row per tenant, while it exists' },
  api_keys: { kind: 'configuration', kept: 'a row per key, revoked ones included' },
  webhook_endpoints: { kind: 'configuration', kept: 'a row per endpoint, while it exists' },
  outbox_subscriptions: { kind: 'configuration', kept: 'a row per subscription' },
  outbox_cursors: { kind: 'configuration', kept: "a row per event-log consumer's position" },
  payment_settings: { kind: 'configuration', kept: 'a row per tenant setting' },
  provider_key_secret: { kind: 'configuration', kept: 'the secret provider keys are hashed with' },
  idempotency_partitions: {
    kind: 'configuration',
    kept: 'a row per partition, removed when retention drops the partition',
  },
  mikro_orm_migrations: { kind: 'configuration', kept: 'a row per migration applied' },
  idempotency_low_water: {
    kind: 'bounded',
    kept: 'one row: the mark below which every unfinished request is parked (ADR 0062)',
  },
  idempotency_parked: {
    kind: 'bounded',
    kept:
      'a row per unfinished request the low-water mark has passed; the recovery sweep removes ' +
      'it once the request has finished',
  },
  outbox_consumer_circuits: {
    kind: 'bounded',
    kept:
      'a row per remote target whose last delivery failed; the delivery that ends its failures ' +
      '(delivered or abandoned) removes it, and outbox retention one with no delivery pending ' +
      'and not open now (ADR 0071)',
  },
};
