import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The `service` label every series but Node's process metrics carries: the service that emitted
 * it, so a dashboard tells services apart whichever process they run in. lib names none; the
 * process that composes it passes each (docs/api.md §5 lists the values).
 */
export type ServiceLabel = string;

/** Latency buckets every duration histogram shares, so dashboards can compare them. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The process's registry (no global registry: two gateways in one test process must not share
 * counters). Each part of the process adds its own series to it when the process is composed:
 * lib's here, each service's in its own `*.metrics.ts`, the gateway's in the gateway.
 */
export function createMetricsRegistry(opts: { defaultMetrics: boolean }): Registry {
  const registry = new Registry();
  if (opts.defaultMetrics) collectDefaultMetrics({ register: registry });
  return registry;
}

/**
 * How a wait for a key in flight ended: its answer was stored (`replayed`), its lease was given
 * back and this request took it over (`took_over`), it became an unknown outcome (`unknown`),
 * the wait ran out (`timed_out`, answered IDEMPOTENCY_KEY_IN_USE), or no listening connection
 * could be had (`unavailable`, answered at once as if no wait was asked for).
 */
export const KEY_WAIT_OUTCOMES = [
  'replayed',
  'took_over',
  'unknown',
  'timed_out',
  'unavailable',
] as const;
export type KeyWaitOutcome = (typeof KEY_WAIT_OUTCOMES)[number];

/**
 * lib's series of docs/api.md §5: the engine's decisions, recovery, retention and the
 * outbox. The `operation` label is the public mutation name; keys, tenants and payment ids are
 * never labels. Counters are incremented where the decision is made.
 */
export function createLibMetrics(registry: Registry) {
  const registers = [registry];
  return {
    registry,
    requests: new Counter({
      name: 'idempotency_requests_total',
      help: 'Idempotent requests by how admission decided them.',
      labelNames: ['service', 'operation', 'outcome'] as const,
      registers,
    }),
    replays: new Counter({
      name: 'idempotency_replays_total',
      help: 'Requests answered from a stored result.',
      labelNames: ['service', 'operation'] as const,
      registers,
    }),
    conflicts: new Counter({
      name: 'idempotency_conflicts_total',
      help: 'Requests refused because the key was reused for another command or is in flight.',
      labelNames: ['service', 'operation', 'reason'] as const,
      registers,
    }),
    waits: new Counter({
      name: 'idempotency_waits_total',
      help: 'Requests that waited for their key in flight (Prefer: wait), by how the wait ended.',
      labelNames: ['service', 'operation', 'outcome'] as const,
      registers,
    }),
    takeovers: new Counter({
      name: 'idempotency_lease_takeovers_total',
      help: 'Expired leases taken over, by a client retry or the recovery worker.',
      labelNames: ['service', 'operation', 'by'] as const,
      registers,
    }),
    expiredRetries: new Counter({
      name: 'idempotency_expired_retries_total',
      help: 'Retries that arrived after the replay window and were treated as new.',
      labelNames: ['service', 'operation'] as const,
      registers,
    }),
    retentionRuns: new Counter({
      name: 'idempotency_retention_runs_total',
      help: 'Runs of partition maintenance: done, skipped (another process held the lock), error.',
      labelNames: ['service', 'result'] as const,
      registers,
    }),
    outboxPruned: new Counter({
      name: 'outbox_retention_deleted_rows_total',
      help:
        'Rows deleted by outbox retention once past their window: events, deliveries (with ' +
        'their event) and inbox messages; and circuits of remote targets that guard nothing.',
      labelNames: ['service', 'table'] as const,
      registers,
    }),
    outboxRetentionRuns: new Counter({
      name: 'outbox_retention_runs_total',
      help:
        'Runs of outbox retention: complete (nothing past the window left), budget_spent ' +
        '(rows past it left: the next run follows after a pause, not an interval), error.',
      labelNames: ['service', 'result'] as const,
      registers,
    }),
    partitionsInsertableUntil: new Gauge({
      name: 'idempotency_partitions_insertable_until_timestamp_seconds',
      help:
        'Unix time until which a new key has a partition to land in (the newest partition ' +
        'less the TTL), read after each retention run of this process, failed ones included.',
      labelNames: ['service'] as const,
      registers,
    }),
    partitionsSlack: new Gauge({
      name: 'idempotency_partitions_slack_seconds',
      help: "How far beyond a new key's expiry partition maintenance keeps partitions ready.",
      labelNames: ['service'] as const,
      registers,
    }),
    recoverySweeps: new Counter({
      name: 'idempotency_recovery_sweeps_total',
      help: 'Sweeps of the recovery worker, by result.',
      labelNames: ['service', 'result'] as const,
      registers,
    }),
    recoveryLastSweep: new Gauge({
      name: 'idempotency_recovery_last_sweep_timestamp_seconds',
      help: 'Unix time of the last completed sweep of this process; 0 until its first sweep.',
      labelNames: ['service'] as const,
      registers,
    }),
    outboxDeliveries: new Counter({
      name: 'outbox_deliveries_total',
      help: 'Outbox delivery attempts, by consumer and outcome.',
      labelNames: ['service', 'consumer', 'outcome'] as const,
      registers,
    }),
  };
}

export type LibMetrics = ReturnType<typeof createLibMetrics>;

export interface UnfinishedReading {
  service: ServiceLabel;
  operation: string;
  oldestAgeSeconds: number;
  staleLeases: number;
  unknownOutcomes: number;
}

export interface OutboxReading {
  service: ServiceLabel;
  consumer: string;
  pending: number;
  oldestAgeSeconds: number;
}

/** The primary's standbys (lib/db/replication.ts); null read from a standby. */
export interface ReplicationReading {
  /** The role may read the standbys' state: superuser, or pg_monitor's pg_read_all_stats. */
  visible: boolean;
  /** WAL senders to physical standbys, synchronous or not. */
  standbys: number;
  /** Standbys the primary waits for at commit; null when not `visible`, never a blind 0. */
  synchronous: number | null;
}

/**
 * Gauges whose value is read from the database at scrape time, so they are true for the whole
 * fleet rather than for the process that happens to be scraped (every process reports the same
 * value: aggregate them with max, not sum).
 */
export function registerFleetGauges(
  metrics: LibMetrics,
  read: {
    unfinished: () => Promise<UnfinishedReading[]>;
    outbox: () => Promise<OutboxReading[]>;
    replication: () => Promise<ReplicationReading | null>;
  },
  /** The `service` of the replication gauges, which belong to no one service. */
  processService: ServiceLabel,
): void {
  const registers = [metrics.registry];
  const unfinished = oncePerScrape(read.unfinished);
  const outbox = oncePerScrape(read.outbox);
  registerReplicationGauges(registers, oncePerScrape(read.replication), processService);
  const byOperation = (spec: {
    name: string;
    help: string;
    value: (row: UnfinishedReading) => number;
  }) =>
    new Gauge({
      name: spec.name,
      help: spec.help,
      labelNames: ['service', 'operation'] as const,
      registers,
      async collect() {
        const rows = await unfinished();
        this.reset();
        for (const row of rows) {
          this.set({ service: row.service, operation: row.operation }, spec.value(row));
        }
      },
    });
  byOperation({
    name: 'idempotency_in_progress_age_max_seconds',
    help: 'Age of the oldest started (not unknown) unfinished request, per operation.',
    value: (row) => row.oldestAgeSeconds,
  });
  byOperation({
    name: 'idempotency_stale_leases',
    help: 'Unfinished requests whose lease ran out under an owner that stopped (not those released to back off).',
    value: (row) => row.staleLeases,
  });
  byOperation({
    name: 'idempotency_unknown_outcomes',
    help: 'Requests whose provider outcome is unknown and await reconciliation.',
    value: (row) => row.unknownOutcomes,
  });
  const byConsumer = (spec: {
    name: string;
    help: string;
    value: (row: OutboxReading) => number;
  }) =>
    new Gauge({
      name: spec.name,
      help: spec.help,
      labelNames: ['service', 'consumer'] as const,
      registers,
      async collect() {
        const rows = await outbox();
        this.reset();
        for (const row of rows) {
          this.set({ service: row.service, consumer: row.consumer }, spec.value(row));
        }
      },
    });
  byConsumer({
    name: 'outbox_backlog_events',
    help: 'Undelivered outbox deliveries, per consumer.',
    value: (row) => row.pending,
  });
  byConsumer({
    name: 'outbox_oldest_pending_age_seconds',
    help: 'Age of the oldest undelivered outbox delivery, per consumer.',
    value: (row) => row.oldestAgeSeconds,
  });
}

/**
 * How many copies acknowledge a commit (grafana/RUNBOOKS.md#databasesynchronousstandbylost).
 * A value that could not be read has no sample rather than 0: with a reading from a standby,
 * none of them; without the privilege to see sync states, no synchronous count.
 */
function registerReplicationGauges(
  registers: Registry[],
  replication: () => Promise<ReplicationReading | null>,
  service: ServiceLabel,
): void {
  const gauge = (spec: {
    name: string;
    help: string;
    value: (reading: ReplicationReading) => number | null;
  }) =>
    new Gauge({
      name: spec.name,
      help: spec.help,
      labelNames: ['service'] as const,
      registers,
      async collect() {
        const reading = await replication();
        this.reset();
        const value = reading === null ? null : spec.value(reading);
        if (value !== null) this.set({ service }, value);
      },
    });
  gauge({
    name: 'payments_db_synchronous_standbys',
    help:
      'Standbys the primary waits for at commit (sync_state sync or quorum); absent when the ' +
      'role cannot see it (payments_db_replication_visible 0).',
    value: (reading) => reading.synchronous,
  });
  gauge({
    name: 'payments_db_standbys',
    help: 'Physical standbys streaming from the primary, synchronous or not.',
    value: (reading) => reading.standbys,
  });
  gauge({
    name: 'payments_db_replication_visible',
    help:
      "1 when the database role can read its standbys' sync state (superuser or pg_monitor), " +
      'else 0.',
    value: (reading) => (reading.visible ? 1 : 0),
  });
}

/**
 * prom-client calls collect() once per metric: gauges fed by one query share its reading within
 * a scrape instead of each running it.
 */
function oncePerScrape<T>(read: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | null = null;
  return () => {
    pending ??= read().finally(() => setImmediate(() => (pending = null)));
    return pending;
  };
}

/**
 * Creates every expected series at zero. A labelled counter appears only at its first increment,
 * and `rate()` cannot see an increment from nothing: without this, the first conflict of a
 * process, or the first delivery failure, would never show on a dashboard or fire an alert.
 */
export function initialiseSeries(
  metrics: LibMetrics,
  known: {
    operations: ReadonlyArray<{ service: ServiceLabel; publicName: string }>;
    consumers: ReadonlyArray<{ service: ServiceLabel; consumer: string }>;
    /** The `service` of the process's own jobs: recovery sweeps and retention runs. */
    jobs: ServiceLabel;
  },
): void {
  for (const { service, publicName: operation } of known.operations) {
    for (const outcome of [
      'executed',
      'replayed',
      'in_use',
      'key_reused',
      'invalid_key',
      'expired_retry',
    ]) {
      metrics.requests.inc({ service, operation, outcome }, 0);
    }
    metrics.replays.inc({ service, operation }, 0);
    metrics.expiredRetries.inc({ service, operation }, 0);
    for (const reason of ['different_request', 'in_progress']) {
      metrics.conflicts.inc({ service, operation, reason }, 0);
    }
    for (const by of ['retry', 'worker']) metrics.takeovers.inc({ service, operation, by }, 0);
    for (const outcome of KEY_WAIT_OUTCOMES) metrics.waits.inc({ service, operation, outcome }, 0);
  }
  for (const { service, consumer } of known.consumers) {
    for (const outcome of ['delivered', 'failed']) {
      metrics.outboxDeliveries.inc({ service, consumer, outcome }, 0);
    }
  }
  for (const result of ['claimed', 'empty', 'error']) {
    metrics.recoverySweeps.inc({ service: known.jobs, result }, 0);
  }
  // As its help says: 0 until the first sweep. Absent, a process whose worker never swept
  // would show nothing rather than a sweep at the epoch.
  metrics.recoveryLastSweep.set({ service: known.jobs }, 0);
  for (const result of ['done', 'skipped', 'error']) {
    metrics.retentionRuns.inc({ service: known.jobs, result }, 0);
  }
  for (const table of OUTBOX_PRUNED_TABLES) {
    metrics.outboxPruned.inc({ service: known.jobs, table }, 0);
  }
  for (const result of OUTBOX_RETENTION_RESULTS) {
    metrics.outboxRetentionRuns.inc({ service: known.jobs, result }, 0);
  }
}

/** The `result` label of outbox_retention_runs_total. */
export const OUTBOX_RETENTION_RESULTS = ['complete', 'budget_spent', 'error'] as const;

/** The `table` label of outbox_retention_deleted_rows_total. */
export const OUTBOX_PRUNED_TABLES = [
  'outbox_events',
  'outbox_deliveries',
  'inbox_messages',
  'outbox_consumer_circuits',
] as const;
