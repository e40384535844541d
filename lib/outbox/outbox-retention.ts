import type pg from 'pg';
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

export interface OutboxPruned {
  events: number;
  deliveries: number;
  inboxMessages: number;
  /** Circuits of remote targets with nothing pending and nothing held back (PRUNE_CIRCUITS). */
  circuits: number;
  /** Everything past the window was deleted; false when the run's budget ran out first. */
  complete: boolean;
}

/**
 * One run of outbox retention: batches of events (with their deliveries), then of inbox rows,
 * then of circuits that guard nothing, each until a batch comes back short or the budget is
 * spent. Safe from any number of processes at
 * once (SKIP LOCKED), and never in the way of the request path: the rows it deletes are ones no
 * request or dispatcher reads, and it waits on no lock.
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
