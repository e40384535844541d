import type { Queryable } from '../db/pool.ts';
import { PeriodicJob } from '../periodic-job.ts';
import { PRUNE_CIRCUITS, PRUNE_EVENTS, PRUNE_INBOX } from './outbox-retention.sql.ts';

export interface OutboxRetentionPolicy {
  /** How long an event (and the record of its deliveries) and an inbox row are kept. */
  retentionSeconds: number;
  /** Rows one statement deletes at most: a batch's locks last one short statement. */
  batchSize: number;
  /**
   * A run starts no batch after this long, finished or not (its first batch always runs); the
   * next run goes on at the stage where it stopped.
   */
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

/** Rows deleted, by what they were. */
export interface OutboxPrunedRows {
  events: number;
  deliveries: number;
  inboxMessages: number;
  /** Circuits of remote targets with nothing pending and not open now (PRUNE_CIRCUITS). */
  circuits: number;
}

const NO_ROWS: Readonly<OutboxPrunedRows> = {
  events: 0,
  deliveries: 0,
  inboxMessages: 0,
  circuits: 0,
};

/**
 * The stages of a pass, in order: events (with their deliveries), inbox rows, circuits. A stage
 * is done when a batch comes back short.
 */
export const OUTBOX_RETENTION_STAGES = ['events', 'inbox', 'circuits'] as const;
export type OutboxRetentionStage = (typeof OUTBOX_RETENTION_STAGES)[number];

export interface OutboxPruned extends OutboxPrunedRows {
  /**
   * Every stage from the one this run started at came back short: the pass is done when the run
   * started where the last one stopped (outboxRetentionJob does), or at the events. False when
   * the budget ran out first.
   */
  complete: boolean;
  /** Where the next run starts: the stage the budget stopped, or the first after a full pass. */
  next: OutboxRetentionStage;
}

/** The shortest wait between runs while behind, so that a policy with no budget never spins. */
const MIN_CATCH_UP_PAUSE_MS = 1_000;

/**
 * How long the job (outboxRetentionJob) waits after a run before the next. After a run that
 * spent its budget, the pass is not done: were the next run an interval away, retention could
 * delete at most one budget's worth an interval, and a steady write rate above that would grow
 * the tables without end, however long it ran. So while behind, the next run follows after a
 * pause as long as the budget, until a run completes. Retention then holds its one connection
 * about half the time, each batch's locks for one short statement; more only when a batch itself
 * outlasts the budget (one waiting on a row lock, up to the statement timeout). After a complete
 * run, or a failed one (`undefined`: a database in trouble is not pressed), the interval.
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
 * interval, and sooner while behind (delayAfterOutboxRun). Each run starts at the stage where
 * the last one stopped (pruneOutbox's `next`); after a failed run, where that one started.
 */
export function outboxRetentionJob(
  run: (from: OutboxRetentionStage) => Promise<OutboxPruned>,
  opts: { policy: OutboxRetentionPolicy; intervalMs: number; onError: (error: unknown) => void },
): PeriodicJob<OutboxPruned> {
  let from: OutboxRetentionStage = OUTBOX_RETENTION_STAGES[0];
  return new PeriodicJob(
    async () => {
      const pruned = await run(from);
      from = pruned.next;
      return pruned;
    },
    {
      intervalMs: opts.intervalMs,
      onError: opts.onError,
      delayAfter: (pruned) => delayAfterOutboxRun(pruned, opts),
    },
  );
}

/**
 * One run of outbox retention, from stage `from` on: batches of events (with their deliveries),
 * then of inbox rows, then of circuits that guard nothing, each stage until a batch comes back
 * short or the budget is spent. The first batch always runs, and a run the budget stopped says
 * at which stage (`next`). Were every run to start at the events, a pass whose stages together
 * outlast one budget (a database so slow that a budget holds a batch or two) would never
 * complete: each run would end in the inbox or the circuits, and the next begin again at the
 * events. A job that starts each run at the last one's `next` moves the pass on by a batch at
 * least every run. A backlog of events that never ends still keeps the later stages waiting;
 * that is retention falling behind, which OutboxRetentionBehind reports.
 *
 * `onBatch` hears of each batch once it has committed, so that a run that fails later still
 * counts what it deleted.
 *
 * Safe from any number of processes at once (SKIP LOCKED), and never in the way of the request
 * path: the rows it deletes are ones no request or dispatcher reads. A batch waits on a row lock
 * only for a delivery another transaction holds (a redelivery asked for), bounded by the
 * connection's statement timeout (OUTBOX_RETENTION_STATEMENT_TIMEOUT_MS on the app's).
 */
export async function pruneOutbox(
  pool: Queryable,
  policy: OutboxRetentionPolicy,
  opts: { from?: OutboxRetentionStage; onBatch?: (rows: OutboxPrunedRows) => void } = {},
): Promise<OutboxPruned> {
  // The monotonic clock: a wall clock set back would stretch the budget.
  const deadline = performance.now() + policy.budgetMs;
  const pruned: OutboxPrunedRows = { ...NO_ROWS };
  const from = OUTBOX_RETENTION_STAGES.indexOf(opts.from ?? OUTBOX_RETENTION_STAGES[0]);
  if (from < 0) throw new TypeError(`pruneOutbox: no stage ${String(opts.from)}`);
  let firstBatch = true;
  for (const stage of OUTBOX_RETENTION_STAGES.slice(from)) {
    for (;;) {
      if (!firstBatch && performance.now() >= deadline) {
        return { ...pruned, complete: false, next: stage };
      }
      firstBatch = false;
      const { rows, short } = await pruneBatch(pool, policy, stage);
      pruned.events += rows.events;
      pruned.deliveries += rows.deliveries;
      pruned.inboxMessages += rows.inboxMessages;
      pruned.circuits += rows.circuits;
      opts.onBatch?.(rows);
      if (short) break;
    }
  }
  return { ...pruned, complete: true, next: OUTBOX_RETENTION_STAGES[0] };
}

/** One batch of `stage`, committed on its own; `short` when it found fewer rows than a batch. */
async function pruneBatch(
  pool: Queryable,
  policy: OutboxRetentionPolicy,
  stage: OutboxRetentionStage,
): Promise<{ rows: OutboxPrunedRows; short: boolean }> {
  const args = [policy.retentionSeconds, policy.batchSize];
  switch (stage) {
    case 'events': {
      const { rows } = await pool.query<{ events: number; deliveries: number }>(PRUNE_EVENTS, args);
      const { events, deliveries } = rows[0]!;
      return { rows: { ...NO_ROWS, events, deliveries }, short: events < policy.batchSize };
    }
    case 'inbox': {
      const { rows } = await pool.query<{ messages: number }>(PRUNE_INBOX, args);
      const inboxMessages = rows[0]!.messages;
      return { rows: { ...NO_ROWS, inboxMessages }, short: inboxMessages < policy.batchSize };
    }
    case 'circuits': {
      const { rows } = await pool.query<{ circuits: number }>(PRUNE_CIRCUITS, [policy.batchSize]);
      const circuits = rows[0]!.circuits;
      return { rows: { ...NO_ROWS, circuits }, short: circuits < policy.batchSize };
    }
  }
}
