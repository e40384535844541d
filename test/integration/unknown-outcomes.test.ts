import { describe, expect, it } from 'vitest';
import { reconcileUnknownPayments } from '../../services/payments/reconcile-payments.ts';
import { errorCodeOf, paymentOf, type GraphQLAnswer } from '../support/graphql-client.ts';
import { createPaymentOn, keyRowOf, paymentInput, useTestStack } from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';

/**
 * Every way the gateway can be without an answer from the provider, and how each ends: probe
 * found, probe missing then re-call, no answer then recovery, and no answer past the attempt
 * limit then reconciliation (charge found, charge absent). Never FAILED for lack of an answer.
 */
/** Short provider timeout so the no-answer paths run in test time; the sandbox is local. */
const PROVIDER_TIMEOUT_MS = 200;
const BLACKHOLE_MS = 2_500;
/** The sandbox applies every request it will ever apply at once; 300 ms is ample. */
const APPLY_WINDOW_MS = 300;
/** Until the books are final: the provider's apply window has passed, with slack for timers. */
const BOOKS_FINAL_WAIT_MS = APPLY_WINDOW_MS + 200;
const stack = useTestStack('unknown', {
  sandbox: { blackholeMs: BLACKHOLE_MS, statementLagMs: 50 },
  app: {
    providerTimeoutMs: PROVIDER_TIMEOUT_MS,
    unknownAfterAttempts: 2,
    backoffBaseMs: 50,
    providerApplyWindowMs: APPLY_WINDOW_MS,
  },
});

/** createPayment of 15.00 by `paymentMethod`, keyed and referenced by `key`. */
const payWith = (key: string, paymentMethod: string): Promise<GraphQLAnswer> =>
  createPaymentOn(stack, paymentInput(key, { amount: '15.00', paymentMethod }));

async function metric(pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${stack.app.url}/metrics`)).text();
  return Number(pattern.exec(text)?.[1] ?? 0);
}
const providerCalls = (outcome: string) =>
  metric(
    new RegExp(
      `provider_calls_total\\{service="provider",operation="createPayment",outcome="${outcome}"\\} (\\d+)`,
    ),
  );

const keyRow = (key: string) => keyRowOf(stack.db, key);

describe('probe found: pm_card_lost_response', () => {
  it('the charge was applied but its answer lost: the probe finds it and the request completes', async () => {
    const before = await providerCalls('probe_found');
    const answer = await payWith('lost-1', 'pm_card_lost_response');
    expect(paymentOf(answer).status).toBe('SUCCEEDED');
    expect(stack.sandbox.charges({ reference: 'lost-1' })).toHaveLength(1);
    expect(paymentOf(answer).providerReference).toBe(
      stack.sandbox.charges({ reference: 'lost-1' })[0]?.id,
    );
    expect(await providerCalls('probe_found')).toBe(before + 1);
  });
});

describe('probe missing, then re-call: pm_card_timeout', () => {
  it('the first attempt never took effect: the probe finds nothing and a re-call with the same key succeeds', async () => {
    const before = await providerCalls('probe_missing');
    const answer = await payWith('timeout-1', 'pm_card_timeout');
    expect(paymentOf(answer).status).toBe('SUCCEEDED');
    const charges = stack.sandbox.charges({ reference: 'timeout-1' });
    expect(charges).toHaveLength(1);
    const stored = await stack.db.query<{ provider_key: string }>(
      'SELECT provider_key FROM payments WHERE id = $1',
      [paymentOf(answer).id],
    );
    expect(charges[0]?.idempotencyKey).toBe(stored.rows[0]?.provider_key);
    expect(await providerCalls('probe_missing')).toBe(before + 1);
  });
});

describe('no answer: pm_card_unknown', () => {
  it('answers OUTCOME_PENDING (202, Retry-After, paymentId), never FAILED, and a retry after the outage completes once', async () => {
    const timeoutsBefore = await providerCalls('timeout');
    const started = Date.now();
    const first = await payWith('unknown-1', 'pm_card_unknown');
    // Bounded: one provider timeout plus one probe, not the length of the outage.
    expect(Date.now() - started).toBeLessThan(BLACKHOLE_MS);
    expect(first.status).toBe(202);
    expect(errorCodeOf(first)).toBe('OUTCOME_PENDING');
    expect(Number(first.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const paymentId = first.body.errors?.[0]?.extensions?.['paymentId'];
    expect(paymentId).toEqual(expect.any(String));
    expect(await keyRow('unknown-1')).toMatchObject({
      state: 'started',
      attempts: 1,
      recovery_point: 'provider_charge_sent',
    });
    const { rows } = await stack.db.query(`SELECT status FROM payments WHERE id = $1`, [paymentId]);
    expect(rows).toEqual([{ status: 'PROCESSING' }]);
    expect(await providerCalls('timeout')).toBeGreaterThan(timeoutsBefore);

    // The outage itself must pass: the sandbox's blackhole lasts BLACKHOLE_MS from the call.
    await new Promise((resolve) => setTimeout(resolve, BLACKHOLE_MS));
    const after = await payWith('unknown-1', 'pm_card_unknown');
    expect(paymentOf(after)).toMatchObject({ id: paymentId, status: 'SUCCEEDED' });
    expect(stack.sandbox.charges({ reference: 'unknown-1' })).toHaveLength(1);
  });

  it('the recovery worker alone completes it after the outage, with backoff between attempts', async () => {
    const first = await payWith('unknown-worker', 'pm_card_unknown');
    expect(errorCodeOf(first)).toBe('OUTCOME_PENDING');
    const { rows: parked } = await stack.db.query<{ next_attempt_at: Date; last_attempt_at: Date }>(
      `SELECT next_attempt_at, last_attempt_at FROM idempotency_keys WHERE key = 'unknown-worker'`,
    );
    expect(parked[0]!.next_attempt_at.getTime()).toBeGreaterThan(
      parked[0]!.last_attempt_at.getTime(),
    );

    // The outage itself must pass: the sandbox's blackhole lasts BLACKHOLE_MS from the call.
    await new Promise((resolve) => setTimeout(resolve, BLACKHOLE_MS));
    await waitUntil(
      async () => {
        if ((await keyRow('unknown-worker'))?.state === 'finished') return true;
        await stack.app.services.worker.sweepOnce();
        return false;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: 'the worker to finish unknown-worker' },
    );
    expect(stack.sandbox.charges({ reference: 'unknown-worker' })).toHaveLength(1);
    const replay = await payWith('unknown-worker', 'pm_card_unknown');
    expect(paymentOf(replay).status).toBe('SUCCEEDED');
  });
});

describe('no answer past the attempt limit: UNKNOWN, then reconciliation', () => {
  async function driveToUnknown(key: string, paymentMethod: string): Promise<string> {
    const first = await payWith(key, paymentMethod);
    expect(errorCodeOf(first)).toBe('OUTCOME_PENDING');
    const second = await payWith(key, paymentMethod); // the 2nd timed-out attempt: the limit
    expect(errorCodeOf(second)).toBe('OUTCOME_PENDING');
    expect(await keyRow(key)).toMatchObject({ state: 'unknown', attempts: 2 });
    return first.body.errors?.[0]?.extensions?.['paymentId'] as string;
  }

  it('an unknown request is not called again by retries, shows in the gauge, and a found charge completes it', async () => {
    const paymentId = await driveToUnknown('recon-found', 'pm_card_unknown');
    expect(
      await metric(
        /idempotency_unknown_outcomes\{service="payments",operation="createPayment"\} (\d+)/,
      ),
    ).toBeGreaterThanOrEqual(1);
    // An unknown outcome has no owner and no lease: it is not "in progress", and the age gauge
    // (what the stuck-request alert reads) leaves it to its own gauge. Nothing else is started.
    expect(
      await metric(
        /idempotency_in_progress_age_max_seconds\{service="payments",operation="createPayment"\} ([\d.]+)/,
      ),
    ).toBe(0);
    const attempts = stack.sandbox.attempts({ reference: 'recon-found' });
    const retry = await payWith('recon-found', 'pm_card_unknown');
    expect(retry.status).toBe(202);
    expect(errorCodeOf(retry)).toBe('OUTCOME_PENDING');
    expect(stack.sandbox.attempts({ reference: 'recon-found' })).toBe(attempts); // no new call

    // Still inside the outage: calls and probes hang, but the provider's books have the charge.
    const report = await reconcileUnknownPayments(stack.app.services.deps, 'reconciliation');
    expect(report.chargeFound).toBeGreaterThanOrEqual(1);
    const settled = await payWith('recon-found', 'pm_card_unknown');
    expect(paymentOf(settled)).toMatchObject({ id: paymentId, status: 'SUCCEEDED' });
    expect(settled.body.extensions).toEqual({ idempotency: { replayed: true } });
    expect(stack.sandbox.charges({ reference: 'recon-found' })).toHaveLength(1);
    const { rows } = await stack.db.query(
      `SELECT action, decided_by FROM idempotency_interventions WHERE key = 'recon-found'`,
    );
    expect(rows).toEqual([{ action: 'reconciled_charge_found', decided_by: 'reconciliation' }]);
    expect(
      await metric(
        /idempotency_unknown_outcomes\{service="payments",operation="createPayment"\} (\d+)/,
      ),
    ).toBe(0);
  });

  it('a charge provably absent after the provider’s window ends as FAILED with its own code', async () => {
    const paymentId = await driveToUnknown('recon-absent', 'pm_card_unreachable');
    // The books are final only once a possible late charge would be in them.
    await new Promise((resolve) => setTimeout(resolve, BOOKS_FINAL_WAIT_MS));
    const report = await reconcileUnknownPayments(stack.app.services.deps, 'reconciliation');
    expect(report.chargeAbsent).toBe(1);
    const settled = await payWith('recon-absent', 'pm_card_unreachable');
    expect(paymentOf(settled)).toMatchObject({
      id: paymentId,
      status: 'FAILED',
      failureCode: 'PROVIDER_CHARGE_ABSENT',
    });
    expect(stack.sandbox.charges({ reference: 'recon-absent' })).toHaveLength(0);
    const { rows } = await stack.db.query(
      `SELECT action FROM idempotency_interventions WHERE key = 'recon-absent'`,
    );
    expect(rows).toEqual([{ action: 'reconciled_charge_absent' }]);
  });

  it('a record reconciliation cannot settle is reported, stays unknown, and does not stop the others', async () => {
    await driveToUnknown('recon-broken', 'pm_card_unknown');
    await driveToUnknown('recon-fine', 'pm_card_unknown');
    // Someone changed the payment behind the engine's back: its final phase must refuse.
    await stack.db.query(
      `UPDATE payments SET status = 'CANCELED' WHERE reference = 'recon-broken'`,
    );
    const report = await reconcileUnknownPayments(stack.app.services.deps, 'reconciliation');
    expect(report.failed).toEqual([expect.objectContaining({ key: 'recon-broken' })]);
    expect(report.chargeFound).toBe(1);
    expect(await keyRow('recon-broken')).toMatchObject({ state: 'unknown' });
    expect(await keyRow('recon-fine')).toMatchObject({ state: 'finished' });
    await stack.db.query(`DELETE FROM idempotency_keys WHERE key = 'recon-broken'`); // keep the gauge clean for later tests
  });

  it('a charge absent from books that are not final yet stays unknown', async () => {
    await driveToUnknown('recon-early', 'pm_card_unreachable');
    await stack.db.query(
      `UPDATE idempotency_keys SET last_attempt_at = now() + interval '1 hour' WHERE key = 'recon-early'`,
    );
    const report = await reconcileUnknownPayments(stack.app.services.deps, 'reconciliation');
    expect(report.undecided).toBeGreaterThanOrEqual(1);
    expect(await keyRow('recon-early')).toMatchObject({ state: 'unknown' });
  });
});
