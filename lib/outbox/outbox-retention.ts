import type pg from 'pg';
import { PeriodicJob } from '../periodic-job.ts';
import { PRUNE_CIRCUITS, PRUNE_EVENTS, PRUNE_INBOX } from './outbox-retention.sql.ts';

export interface OutboxRetentionPolicy {
  /** How long an event (and the record of its deliveries) and an inbox row are kept. */
  retentionSeconds: number;
  /** Rows one statement deletes at most: a batch's locks last one short statement. */
  batchSize: number;
  /** A run stops after this long, finished or not; the next run goes on where it stopped. */
  budgetMs: number;
}

/**
 * Thirty days, as long as Stripe keeps events for a merchant to ask for them again; batches of
 * 500 rows; at most ten seconds of a run.
 */
export const DEFAULT_OUTBOX_RETENTION: Readonly<OutboxRetentionPolicy> = {
  retentionSeconds: 30 * 86_400,
  batchSize: 500,
  budgetMs: 10_000,
};

/**
 * The longest one batch may take on the app's connection for outbox retention. A batch takes far
 * less, unless it waits on a row lock: a redelivery's transaction, briefly, or a session left
 * idle in a transaction, for good. Past it the batch fails and the run counts as an error.
 */
export const OUTBOX_RETENTION_STATEMENT_TIMEOUT_MS = 60_000;

export interface OutboxPruned {
  events: number;
  deliveries: number;
  inboxMessages: number;
  /** Circuits of remote targets with nothing pending and not open now (PRUNE_CIRCUITS). */
  circuits: number;
  /** Everything past the window was deleted; false when the run's budget ran out first. */
  complete: boolean;
}

/** The shortest wait between runs while behind, so that a policy with no budget never spins. */
const MIN_CATCH_UP_PAUSE_MS = 1_000;

/**
 * How long the job (outboxRetentionJob) waits after a run before the next. After a run that spent its budget, rows
 * past their window are left: were the next run an interval away, retention could delete at
 * most one budget's worth an interval, and a steady write rate above that would grow the tables
 * without end, however long it ran. So while behind, the next run follows after a pause as long
 * as the budget (retention then holds its one connection at most half the time, each batch's
 * locks for one short statement), until a run completes. After a complete run, or a failed one
 * (`undefined`: a database in trouble is not pressed), the interval.
 */
export function delayAfterOutboxRun(
  pruned: OutboxPruned | undefined,
  { policy, intervalMs }: { policy: OutboxRetentionPolicy; intervalMs: number },
): number {
  if (pruned === undefined || pruned.complete) return intervalMs;
  return Math.min(intervalMs, Math.max(MIN_CATCH_UP_PAUSE_MS, policy.budgetMs));
}

/**
 * The job of outbox retention: `run` (pruneOutbox under `policy`, and what counts it) every
 * interval, and sooner while behind (delayAfterOutboxRun).
 */
export function outboxRetentionJob(
  run: () => Promise<OutboxPruned>,
  opts: { policy: OutboxRetentionPolicy; intervalMs: number; onError: (error: unknown) => void },
): PeriodicJob<OutboxPruned> {
  return new PeriodicJob(run, {
    intervalMs: opts.intervalMs,
    onError: opts.onError,
    delayAfter: (pruned) => delayAfterOutboxRun(pruned, opts),
  });
}

/**
 * One run of outbox retention: batches of events (with their deliveries), then of inbox rows,
 * then of circuits that guard nothing, each until a batch comes back short or the budget is
 * spent. Safe from any number of processes at once (SKIP LOCKED), and never in the way of the
 * request path: the rows it deletes are ones no request or dispatcher reads. A batch waits on a
 * row lock only for a delivery another transaction holds (a redelivery asked for), bounded by
 * the connection's statement timeout (OUTBOX_RETENTION_STATEMENT_TIMEOUT_MS on the app's).
 */
export async function pruneOutbox(
  pool: pg.Pool,
  policy: OutboxRetentionPolicy,
): Promise<OutboxPruned> {
  const deadline = Date.now() + policy.budgetMs;
  const pruned: OutboxPruned = {
    events: 0,
    deliveries: 0,
    inboxMessages: 0,
    circuits: 0,
    complete: false,
  };
  const args = [policy.retentionSeconds, policy.batchSize];
  for (;;) {
    if (Date.now() >= deadline) return pruned;
    const { rows } = await pool.query<{ events: number; deliveries: number }>(PRUNE_EVENTS, args);
    pruned.events += rows[0]!.events;
    pruned.deliveries += rows[0]!.deliveries;
    if (rows[0]!.events < policy.batchSize) break;
  }
  for (;;) {
    if (Date.now() >= deadline) return pruned;
    const { rows } = await pool.query<{ messages: number }>(PRUNE_INBOX, args);
    pruned.inboxMessages += rows[0]!.messages;
    if (rows[0]!.messages < policy.batchSize) break;
  }
  for (;;) {
    if (Date.now() >= deadline) return pruned;
    const { rows } = await pool.query<{ circuits: number }>(PRUNE_CIRCUITS, [policy.batchSize]);
    pruned.circuits += rows[0]!.circuits;
    if (rows[0]!.circuits < policy.batchSize) break;
  }
  return { ...pruned, complete: true };
}
