import { describe, expect, it } from 'vitest';
import { createPaymentOn, paymentInput, useTestStack } from '../support/test-stack.ts';
import { paymentOf } from '../support/graphql-client.ts';
import { waitUntil } from '../support/wait-until.ts';

const stack = useTestStack('heap-only-finish');

/**
 * A payment's key row finishes with a heap-only update (ADR 0062): no index of idempotency_keys
 * holds a column the finish changes, and admission set the window far enough ahead that a
 * prompt finish leaves it as it is. A finish that is not heap-only writes the row again with an
 * entry in every index, and leaves the admitted version dead.
 */
describe("a key row's finish", () => {
  it('is a heap-only update, and keeps the window admission set', async () => {
    const before = await keyUpdates();
    const payments = 20;
    for (let i = 0; i < payments; i++) {
      const answer = await createPaymentOn(stack, paymentInput(`hot-${i}`));
      expect(paymentOf(answer).status).toBe('SUCCEEDED');
    }
    // Each backend reports its counts when it goes idle, within a second or so.
    let after = before;
    await waitUntil(
      async () => {
        after = await keyUpdates();
        return after.updates - before.updates >= payments;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: 'the finishes to reach the statistics' },
    );
    expect(after.updates - before.updates).toBe(payments);
    expect(after.hot - before.hot).toBe(payments);

    const { rows } = await stack.db.query<{ beyond_window: boolean }>(
      `SELECT expires_at >= updated_at + make_interval(secs => 86400) AS beyond_window
         FROM idempotency_keys WHERE key LIKE 'hot-%'`,
    );
    expect(rows).toHaveLength(payments);
    expect(rows.every((r) => r.beyond_window)).toBe(true);
  });
});

/** Updates of key rows so far, and how many of them were heap-only, over every partition. */
async function keyUpdates(): Promise<{ updates: number; hot: number }> {
  const { rows } = await stack.db.query<{ updates: number; hot: number }>(
    `SELECT coalesce(sum(n_tup_upd), 0)::int AS updates, coalesce(sum(n_tup_hot_upd), 0)::int AS hot
       FROM pg_stat_user_tables WHERE relname LIKE 'idempotency\\_keys\\_%'`,
  );
  return rows[0]!;
}
