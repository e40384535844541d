import { createPool } from '../lib/db/pool.ts';
import type { LibMetrics, OUTBOX_PRUNED_TABLES, OUTBOX_RETENTION_RESULTS } from '../lib/metrics.ts';
import {
  OUTBOX_RETENTION_STAGES,
  OUTBOX_RETENTION_STATEMENT_TIMEOUT_MS,
  outboxRetentionJob,
  pruneOutbox,
  type OutboxPruned,
  type OutboxPrunedRows,
  type OutboxRetentionPolicy,
  type OutboxRetentionStage,
} from '../lib/outbox/outbox-retention.ts';
import type { PeriodicJob } from '../lib/periodic-job.ts';
import type { ServiceName } from './topology.ts';

/** The process's outbox retention: its job, one run on demand, and its connection. */
export interface OutboxRetention {
  /** Runs every interval, and again after a pause while behind (delayAfterOutboxRun). */
  job: PeriodicJob<OutboxPruned>;
  /** One run now, from the first stage (for tests and operators). */
  runOnce: () => Promise<OutboxPruned>;
  /** Stops the job and closes the connection. */
  close(): Promise<void>;
}

/**
 * Outbox retention on a connection of its own, so that partition maintenance (minutes, at worst)
 * never holds it up while it catches up, and with a statement timeout: a batch waits on a
 * delivery row another transaction holds (a redelivery), and one held for good (a session idle
 * in a transaction) would otherwise hold the job, counted nowhere. Rows are counted by table as
 * each batch commits, so a run that fails later still counts what it deleted; the run itself is
 * counted by its result.
 */
export function createOutboxRetention(config: {
  databaseUrl: string;
  policy: OutboxRetentionPolicy;
  intervalMs: number;
  /** The longest one batch may wait (a row lock); past it the run fails, counted as an error. */
  statementTimeoutMs?: number;
  metrics: Pick<LibMetrics, 'outboxPruned' | 'outboxRetentionRuns'>;
  /** The `service` label of the process's own jobs. */
  service: ServiceName;
  onError: (error: unknown) => void;
}): OutboxRetention {
  const { metrics, service } = config;
  const pool = createPool({
    connectionString: config.databaseUrl,
    max: 1,
    applicationName: 'payments-outbox-retention',
    statementTimeoutMs: config.statementTimeoutMs ?? OUTBOX_RETENTION_STATEMENT_TIMEOUT_MS,
    planCacheMode: 'auto',
  });
  const count = (table: (typeof OUTBOX_PRUNED_TABLES)[number], rows: number) =>
    metrics.outboxPruned.inc({ service, table }, rows);
  const onBatch = (rows: OutboxPrunedRows) => {
    count('outbox_events', rows.events);
    count('outbox_deliveries', rows.deliveries);
    count('inbox_messages', rows.inboxMessages);
    count('outbox_consumer_circuits', rows.circuits);
  };
  const run = async (from: OutboxRetentionStage): Promise<OutboxPruned> => {
    const result = (outcome: (typeof OUTBOX_RETENTION_RESULTS)[number]) =>
      metrics.outboxRetentionRuns.inc({ service, result: outcome });
    let pruned: OutboxPruned;
    try {
      pruned = await pruneOutbox(pool, config.policy, { from, onBatch });
    } catch (error) {
      result('error');
      throw error;
    }
    result(pruned.complete ? 'complete' : 'budget_spent');
    return pruned;
  };
  const job = outboxRetentionJob(run, {
    policy: config.policy,
    intervalMs: config.intervalMs,
    onError: config.onError,
  });
  return {
    job,
    runOnce: () => run(OUTBOX_RETENTION_STAGES[0]),
    async close() {
      await job.stop();
      await pool.end();
    },
  };
}
