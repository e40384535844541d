import type { Queryable } from '../../lib/db/pool.ts';
import { LOG_BACKLOG } from '../../lib/outbox/event-log.sql.ts';
import { waitUntil } from './wait-until.ts';

/**
 * The outbox's event log as tests see it (migrations/0016): the ledger and receipts take their
 * events through a cursor each, so "delivered" for them is "behind the cursor, with no delivery
 * row left pending".
 */

/** Whether `consumer`'s cursor has passed the event (it took it, or queued it as a delivery row). */
export async function cursorHasPassed(
  db: Queryable,
  consumer: string,
  eventId: string,
): Promise<boolean> {
  const { rows } = await db.query<{ passed: boolean }>(
    `SELECT (e.written_by, e.log_seq) <= (c.written_by, c.log_seq) AS passed
       FROM outbox_events e JOIN outbox_cursors c ON c.consumer = ANY (e.log_consumers)
      WHERE e.id = $1 AND c.consumer = $2`,
    [eventId, consumer],
  );
  return rows[0]?.passed === true;
}

/** Events after their log consumers' cursors, summed over the consumers (the gauges' query). */
export async function eventsBehindCursors(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ pending: number }>(LOG_BACKLOG);
  return rows.reduce((sum, row) => sum + row.pending, 0);
}

/** Moves every cursor back to the start of the log: each log consumer takes every event again. */
export async function rewindCursors(db: Queryable): Promise<void> {
  await db.query(
    `UPDATE outbox_cursors SET written_by = '0', log_seq = 0, claimed_until = '-infinity'`,
  );
}

/**
 * Runs `dispatchers` until nothing they can take is left: no claim takes anything and no event
 * is after a cursor. "A claim took nothing" alone is not drained: a log cursor stops below the
 * oldest transaction still running anywhere on the server (another test file's, a clone of the
 * template), and takes the rest once it ends. A dispatcher's failure is thrown at once. Bounded;
 * fails naming what was left.
 */
export async function drainOutbox(
  db: Queryable,
  dispatchers: ReadonlyArray<{ dispatchOnce(): Promise<number> }>,
): Promise<void> {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  for (;;) {
    const handled = await Promise.all(dispatchers.map((d) => d.dispatchOnce()));
    const behind = await eventsBehindCursors(db);
    if (handled.every((n) => n === 0) && behind === 0) return;
    if (Date.now() > deadline) {
      throw new Error(
        `the outbox did not drain in ${DRAIN_TIMEOUT_MS} ms: ${behind} events behind`,
      );
    }
    if (handled.every((n) => n === 0)) await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Far above a test database's drain; only catches a wedge. */
const DRAIN_TIMEOUT_MS = 15_000;

/**
 * Waits until every event written so far is below the oldest running transaction, so that the
 * next claim of a log cursor sees all of them: for a test that counts what one claim takes.
 */
export async function untilLogIsReadable(db: Queryable): Promise<void> {
  await waitUntil(
    async () => {
      const { rows } = await db.query<{ readable: boolean }>(
        `SELECT COALESCE(max(written_by) < pg_snapshot_xmin(pg_current_snapshot()), true) AS readable
           FROM outbox_events`,
      );
      return rows[0]?.readable === true;
    },
    { timeoutMs: 15_000, intervalMs: 20, what: 'every event below the oldest running transaction' },
  );
}
