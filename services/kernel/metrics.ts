import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The metrics of CONTRACT §5, on a registry owned by whoever composes the process (no global
 * registry: two gateways in one test process must not share counters). The `operation` label
 * is the public mutation name; keys, tenants and payment ids are never labels.
 */
export function createMetrics(opts: { defaultMetrics: boolean }) {
  const registry = new Registry();
  if (opts.defaultMetrics) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    requests: new Counter({
      name: 'idempotency_requests_total',
      help: 'Idempotent requests by how admission decided them.',
      labelNames: ['operation', 'outcome'] as const,
      registers,
    }),
    replays: new Counter({
      name: 'idempotency_replays_total',
      help: 'Requests answered from a stored result.',
      labelNames: ['operation'] as const,
      registers,
    }),
    conflicts: new Counter({
      name: 'idempotency_conflicts_total',
      help: 'Requests refused because the key was reused for another command or is in flight.',
      labelNames: ['operation', 'reason'] as const,
      registers,
    }),
    takeovers: new Counter({
      name: 'idempotency_lease_takeovers_total',
      help: 'Expired leases taken over, by a client retry or the recovery worker.',
      labelNames: ['operation', 'by'] as const,
      registers,
    }),
    expiredRetries: new Counter({
      name: 'idempotency_expired_retries_total',
      help: 'Retries that arrived after the replay window and were treated as new.',
      labelNames: ['operation'] as const,
      registers,
    }),
    providerCalls: new Counter({
      name: 'provider_calls_total',
      help: 'Calls to the payment provider by outcome.',
      labelNames: ['operation', 'outcome'] as const,
      registers,
    }),
    providerDuration: new Histogram({
      name: 'provider_call_duration_seconds',
      help: 'Duration of provider calls, including ones that timed out.',
      labelNames: ['operation'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    graphqlDuration: new Histogram({
      name: 'graphql_request_duration_seconds',
      help: 'Duration of GraphQL requests by root operation.',
      labelNames: ['operation'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    retentionRuns: new Counter({
      name: 'idempotency_retention_runs_total',
      help: 'Runs of partition maintenance: done, skipped (another process held the lock), error.',
      labelNames: ['result'] as const,
      registers,
    }),
    recoverySweeps: new Counter({
      name: 'idempotency_recovery_sweeps_total',
      help: 'Sweeps of the recovery worker, by result.',
      labelNames: ['result'] as const,
      registers,
    }),
    recoveryLastSweep: new Gauge({
      name: 'idempotency_recovery_last_sweep_timestamp_seconds',
      help: 'Unix time of the last completed sweep of this process; 0 until its first sweep.',
      registers,
    }),
    outboxBacklog: new Gauge({
      name: 'outbox_backlog_events',
      help: 'Undelivered outbox deliveries, per consumer.',
      labelNames: ['consumer'] as const,
      registers,
    }),
    outboxOldestPendingAge: new Gauge({
      name: 'outbox_oldest_pending_age_seconds',
      help: 'Age of the oldest undelivered outbox delivery, per consumer.',
      labelNames: ['consumer'] as const,
      registers,
    }),
    outboxDeliveries: new Counter({
      name: 'outbox_deliveries_total',
      help: 'Outbox delivery attempts, by consumer and outcome.',
      labelNames: ['consumer', 'outcome'] as const,
      registers,
    }),
    ledgerPostings: new Counter({
      name: 'ledger_postings_total',
      help: 'Ledger postings written (duplicates excluded), by kind.',
      labelNames: ['kind'] as const,
      registers,
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** Gauges whose value is read from the database at scrape time, true for the whole fleet. */
export function registerFleetGauges(
  metrics: Metrics,
  read: () => Promise<
    Array<{
      operation: string;
      oldestAgeSeconds: number;
      staleLeases: number;
      unknownOutcomes: number;
    }>
  >,
): void {
  const registers = [metrics.registry];
  // One query serves both gauges: prom-client calls collect() per metric, so the second one
  // reuses the first one's reading of the same scrape.
  let pending: Promise<Awaited<ReturnType<typeof read>>> | null = null;
  const readOnce = () => {
    pending ??= read().finally(() => setImmediate(() => (pending = null)));
    return pending;
  };
  type Row = Awaited<ReturnType<typeof read>>[number];
  const fleetGauge = (spec: { name: string; help: string; value: (row: Row) => number }) =>
    new Gauge({
      name: spec.name,
      help: spec.help,
      labelNames: ['operation'] as const,
      registers,
      async collect() {
        const rows = await readOnce();
        this.reset();
        for (const row of rows) this.set({ operation: row.operation }, spec.value(row));
      },
    });
  fleetGauge({
    name: 'idempotency_in_progress_age_max_seconds',
    help: 'Age of the oldest unfinished request, per operation.',
    value: (row) => row.oldestAgeSeconds,
  });
  fleetGauge({
    name: 'idempotency_stale_leases',
    help: 'Unfinished requests whose lease has expired (owner dead or released).',
    value: (row) => row.staleLeases,
  });
  fleetGauge({
    name: 'idempotency_unknown_outcomes',
    help: 'Requests whose provider outcome is unknown and await reconciliation.',
    value: (row) => row.unknownOutcomes,
  });
}
