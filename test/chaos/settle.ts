/**
 * After the load: faults have healed, every operation has its final answer. What is left is
 * the engine's own housekeeping, which the audit must not race: reconciliation of anything still
 * unknown (run on demand through the ops procedure, as an operator would), and delivery of every
 * outbox event to the ledger and receipts (delivery rows pending, events after a log cursor).
 * Both are awaited, within a bound.
 */
import { internalClients } from '../../ops/client.ts';
import { readBacklog } from '../../lib/outbox/outbox.ts';
import type { ScratchDatabase } from './database.ts';
import { INTERNAL_TOKEN, type GatewaySlot } from './stack.ts';

/** Housekeeping of a healthy stack finishes in seconds; this bound only catches a wedge. */
const SETTLE_TIMEOUT_MS = 120_000;
const SETTLE_POLL_MS = 500;
/** The sandbox's statement is final up to now minus its lag (1 s, tiers.ts); wait it out. */
export const STATEMENT_LAG_WAIT_MS = 1_500;

const UNFINISHED = `SELECT count(*)::int AS n FROM idempotency_keys WHERE state <> 'finished'`;

export interface SettleReport {
  reconcileCalls: number;
  settledByCall: number;
  unfinished: number;
  undelivered: number;
  waitedMs: number;
}

export async function settle(input: {
  db: ScratchDatabase;
  slots: GatewaySlot[];
}): Promise<SettleReport> {
  const { db, slots } = input;
  const started = Date.now();
  await Promise.all(slots.map((slot) => slot.running()));
  const report: SettleReport = {
    reconcileCalls: 0,
    settledByCall: 0,
    unfinished: 0,
    undelivered: 0,
    waitedMs: 0,
  };
  for (;;) {
    const url = slots.map((slot) => slot.url).find((u) => u !== undefined);
    if (url !== undefined) {
      const { ops } = internalClients({ url, token: INTERNAL_TOKEN });
      const run = await ops.reconcile.mutate({ actor: 'chaos-suite' });
      report.reconcileCalls += 1;
      report.settledByCall += run.chargeFound + run.chargeAbsent;
    }
    const { rows } = await db.pool.query<{ n: number }>(UNFINISHED);
    report.unfinished = rows[0]?.n ?? -1;
    // The backlog gauges' own count: pending delivery rows and events after a log cursor.
    report.undelivered = (await readBacklog(db.pool)).reduce((sum, c) => sum + c.pending, 0);
    if (report.unfinished === 0 && report.undelivered === 0) break;
    if (Date.now() - started > SETTLE_TIMEOUT_MS) break;
    await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS));
  }
  await new Promise((resolve) => setTimeout(resolve, STATEMENT_LAG_WAIT_MS));
  report.waitedMs = Date.now() - started;
  return report;
}
