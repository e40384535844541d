import { describe, expect, it } from 'vitest';
import { VISIT_RECENT_FINISHES } from '../../lib/idempotency/idempotency.sql.ts';
import { CREATE_PAYMENT } from '../support/operations.ts';
import { rawGraphql } from '../support/sealed-storage.ts';
import { createPaymentOn, paymentInput, TENANT_A, useTestStack } from '../support/test-stack.ts';

/**
 * A finish leaves the key row's admitted version dead, with an entry in the partial index of
 * unfinished rows at its admission lease. The recovery worker's claim reaches that entry once
 * the lease would have ended; if its visit is the first to prune the page after a checkpoint,
 * the prune writes the page's full image to the WAL. The worker's sweep looks at requests
 * finished since its last sweep first (VISIT_RECENT_FINISHES), so the claim's later scan finds
 * nothing left to prune. The first test shows the cost without that look; the second, that a
 * sweep removes it; the third, that a look that fails leaves the claim to run.
 */
const LEASE_MS = 1_000;
/** Enough key rows to fill several heap pages: only a full page is pruned on a read. */
const PAYMENTS = 90;

const stack = useTestStack('recovery_prunes_finished', { app: { leaseMs: LEASE_MS } });

async function finishPayments(prefix: string): Promise<void> {
  for (let start = 0; start < PAYMENTS; start += 10) {
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        createPaymentOn(stack, paymentInput(`${prefix}-${start + i}`)),
      ),
    );
  }
}

/**
 * The WAL that the claim's scan of stale leases writes (its index scan, run read-only as in the
 * production plan on a large table), after a checkpoint and once every lease above has ended.
 */
async function walOfTheClaimScanAfterACheckpoint(): Promise<{ records: number; images: number }> {
  await stack.db.query('CHECKPOINT');
  await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 200));
  const client = await stack.db.connect();
  try {
    await client.query('SET enable_seqscan = off');
    await client.query('SET enable_bitmapscan = off');
    const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: Record<string, unknown> }> }>(
      `EXPLAIN (ANALYZE, WAL, FORMAT JSON)
       SELECT id FROM idempotency_keys
        WHERE state = 'started' AND lease_expires_at <= now()
        ORDER BY lease_expires_at`,
    );
    const plan = rows[0]!['QUERY PLAN'][0]!.Plan;
    expect(plan['Actual Rows']).toBe(0); // every payment finished
    return { records: Number(plan['WAL Records']), images: Number(plan['WAL FPI']) };
  } finally {
    client.release();
  }
}

describe('dead versions left by finishes', () => {
  it('unvisited, are pruned by the claim once their lease has ended, with page images', async () => {
    await finishPayments('unvisited');
    const wal = await walOfTheClaimScanAfterACheckpoint();
    expect(wal.images).toBeGreaterThan(0);
  });

  it('are pruned by the sweep after their finish: the claim later writes nothing', async () => {
    await finishPayments('swept');
    // A sweep comes up to an interval after a finish. Right after the last one, a transaction
    // of the outbox's workers begun before it may still run, and a version it could see is
    // pruned by no one.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await stack.app.services.worker.sweepOnce()).toBe(0);
    const wal = await walOfTheClaimScanAfterACheckpoint();
    expect(wal).toEqual({ records: 0, images: 0 });
  });

  it('a look that fails does not cost the sweep its claim', async () => {
    // A request whose owner died after the provider's answer: stale once its lease ends.
    const input = paymentInput('stale-after-a-failed-look');
    stack.app.faults.arm('createPayment.provider_charge.after-call', { kind: 'throw' });
    try {
      const send = () =>
        rawGraphql(stack.app.url, {
          apiKey: TENANT_A.apiKey,
          query: CREATE_PAYMENT,
          variables: { input },
        });
      expect((await send()).status).toBe(500);
    } finally {
      stack.app.faults.disarm('createPayment.provider_charge.after-call');
    }
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 200));

    // The look fails, as a statement timeout or a failover would fail it.
    const { pool } = stack.app.services.deps;
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    const looks: string[] = [];
    (pool as unknown as { query: typeof query }).query = (...args: unknown[]) => {
      if (args[0] === VISIT_RECENT_FINISHES) {
        looks.push('failed');
        return Promise.reject(new Error('the look failed'));
      }
      return query(...args);
    };
    stack.errors.length = 0;
    try {
      expect(await stack.app.services.worker.sweepOnce()).toBe(1);
    } finally {
      (pool as unknown as { query: typeof query }).query = query;
    }
    expect(looks).toEqual(['failed']);
    expect(stack.errors.map(String)).toContain('Error: the look failed');
    const { rows } = await stack.db.query<{ state: string }>(
      `SELECT state FROM idempotency_keys WHERE key = 'stale-after-a-failed-look'`,
    );
    expect(rows).toEqual([{ state: 'finished' }]);
  });
});
