/**
 * The product's outbox around a measured phase: what was still pending when the load ended (in
 * deliveries, and as the age of the oldest), and then a wait until the dispatcher has drained
 * it, so that the work a phase deferred is charged to that phase and not to whichever system
 * runs next on the same database and cores.
 */
import type pg from 'pg';
import { readBacklog } from '../../lib/outbox/outbox.ts';

/** A backlog still there after this long is reported as not drained; the bench goes on. */
export const DRAIN_LIMIT_SECONDS = 120;
const POLL_MS = 50;

export interface Backlog {
  /** Deliveries pending when the load ended. */
  pending: number;
  /** Age of the oldest pending delivery's event then, in seconds (0: none pending). */
  oldestAgeSeconds: number;
}

export async function outboxBacklog(db: pg.Pool): Promise<Backlog> {
  const consumers = await readBacklog(db);
  return {
    pending: consumers.reduce((sum, c) => sum + c.pending, 0),
    oldestAgeSeconds: Math.max(0, ...consumers.map((c) => c.oldestAgeSeconds)),
  };
}

/** Waits until nothing is pending; how long it took, or null if the limit ran out first. */
export async function waitForDrain(db: pg.Pool): Promise<number | null> {
  const started = performance.now();
  while ((await outboxBacklog(db)).pending > 0) {
    if (performance.now() - started > DRAIN_LIMIT_SECONDS * 1000) return null;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return performance.now() - started;
}
