/**
 * The edges of the unknown-outcome machinery, each pinned by a test that fails when its rule
 * breaks (found by mutating the code one condition at a time): a found charge is not called
 * again, a re-call joins an attempt still in flight, a request is bounded in time, refusals
 * never count towards unknown, the worker honours backoff and never touches unknown requests,
 * reconciliation respects the apply window and a declined charge, claims are token-checked and
 * settle once, a lost final phase hands the request on at once, and only unknown outcomes are
 * resolved by hand.
 */
import { describe, expect, it } from 'vitest';
import { reconcileUnknownPayments } from '../../services/payments/reconcile-payments.ts';
import { CREATE_PAYMENT as CREATE_OP } from '../../services/payments/create-payment.flow.ts';
import { claimForSettlement } from '../../lib/idempotency/settlement.ts';
import { errorCodeOf, paymentOf, type GraphQLAnswer } from '../support/graphql-client.ts';
import { createUntilFinal } from '../support/operations.ts';
import {
  createPaymentOn,
  keyRowOf,
  paymentInput,
  resolveByHandAsNotCharged,
  TENANT_A,
  useTestStack,
} from '../support/test-stack.ts';

const PROVIDER_TIMEOUT_MS = 200;
const APPLY_WINDOW_MS = 300;
/**
 * How long to watch for a second charge that must not happen: an absence cannot be polled for,
 * so time must pass; past the sandbox's apply window, where any second processing would land.
 */
const NO_SECOND_CHARGE_WAIT_MS = 600;
const stack = useTestStack('unknown-edges', {
  sandbox: { blackholeMs: 60_000, statementLagMs: 50, slowMs: 300 },
  app: {
    providerTimeoutMs: PROVIDER_TIMEOUT_MS,
    unknownAfterAttempts: 1,
    providerMaxAttempts: 1,
    providerApplyWindowMs: APPLY_WINDOW_MS,
  },
});

const send = (input: Record<string, unknown>): Promise<GraphQLAnswer> =>
  createPaymentOn(stack, input);
const inputFor = (key: string, paymentMethod: string) =>
  paymentInput(key, { amount: '12.00', paymentMethod });
const keyRow = async (key: string) => (await keyRowOf(stack.db, key)) ?? {};
const paymentIdOf = (a: GraphQLAnswer) => a.body.errors?.[0]?.extensions?.['paymentId'];
const scopeOf = (key: string) => ({ tenantId: stack.tenantIds.a, operation: CREATE_OP, key });
/** No started row is due: a sweep may claim only what a test makes due. */
const parkStarted = () =>
  stack.db.query(
    `UPDATE idempotency_keys SET next_attempt_at = now() + interval '1 hour' WHERE state = 'started'`,
  );

describe('unknown-outcome edges', () => {
  it('a charge found by the probe is used, not called again', async () => {
    const answer = await send(inputFor('p2', 'pm_card_lost_response'));
    expect(paymentOf(answer).status).toBe('SUCCEEDED');
    expect(stack.sandbox.attempts({ reference: 'p2' })).toBe(1);
  });

  it('a re-call joins a first attempt still in flight: one charge', async () => {
    // The slow charge (300 ms) outlives the timeout (200 ms): the re-call with the same key
    // must join it. Retried to a final answer, so the count below does not hang on timing.
    const answer = await createUntilFinal(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      input: inputFor('p3', 'pm_card_slow'),
      deadlineMs: 10_000,
    });
    expect(paymentOf(answer).status).toBe('SUCCEEDED');
    await new Promise((r) => setTimeout(r, NO_SECOND_CHARGE_WAIT_MS));
    expect(stack.sandbox.charges({ reference: 'p3' })).toHaveLength(1);
  });

  it('a request without answer is bounded by about two timeouts; once unknown it says Retry-After 30 with its paymentId', async () => {
    const started = Date.now();
    const first = await send(inputFor('p4', 'pm_card_unreachable'));
    // One call, one probe, one re-call in the time left: about 2 timeouts, never more calls.
    expect(Date.now() - started).toBeLessThan(3 * PROVIDER_TIMEOUT_MS + 200);
    expect(errorCodeOf(first)).toBe('OUTCOME_PENDING');
    expect(first.headers.get('retry-after')).toBe('30');
    const retry = await send(inputFor('p4', 'pm_card_unreachable'));
    expect(errorCodeOf(retry)).toBe('OUTCOME_PENDING');
    expect(retry.headers.get('retry-after')).toBe('30');
    expect(paymentIdOf(retry)).toBe(paymentIdOf(first));
  });

  it('a refusal (503) never counts towards unknown', async () => {
    const refused = await send(inputFor('p6', 'pm_card_unavailable'));
    expect(errorCodeOf(refused)).toBe('PROVIDER_UNAVAILABLE');
    expect(await keyRow('p6')).toMatchObject({ state: 'started', attempts: 1 });
  });

  it('the worker does not claim a released request before its next_attempt_at', async () => {
    expect(errorCodeOf(await send(inputFor('p8', 'pm_card_unavailable')))).toBe(
      'PROVIDER_UNAVAILABLE',
    );
    await parkStarted();
    const calls = stack.sandbox.attempts({ reference: 'p8' });
    expect(await stack.app.services.worker.sweepOnce()).toBe(0);
    expect(stack.sandbox.attempts({ reference: 'p8' })).toBe(calls);
    await stack.db.query(
      `UPDATE idempotency_keys SET next_attempt_at = now() - interval '1 second' WHERE key = 'p8'`,
    );
    expect(await stack.app.services.worker.sweepOnce()).toBe(1);
    expect(stack.sandbox.attempts({ reference: 'p8' })).toBe(calls + 1);
  });

  it('the worker never claims an unknown request', async () => {
    expect(errorCodeOf(await send(inputFor('p9', 'pm_card_unreachable')))).toBe('OUTCOME_PENDING');
    await parkStarted();
    // Due by its backoff: only its state may keep the worker away.
    await stack.db.query(
      `UPDATE idempotency_keys SET next_attempt_at = now() - interval '1 second' WHERE key = 'p9'`,
    );
    const calls = stack.sandbox.attempts({ reference: 'p9' });
    expect(await stack.app.services.worker.sweepOnce()).toBe(0);
    expect(await keyRow('p9')).toMatchObject({ state: 'unknown' });
    expect(stack.sandbox.attempts({ reference: 'p9' })).toBe(calls);
  });

  it('books final past the last attempt but not past the apply window leave it unknown', async () => {
    expect(errorCodeOf(await send(inputFor('p10', 'pm_card_unreachable')))).toBe('OUTCOME_PENDING');
    // A provider that may apply a request up to an hour later: books final a minute past the
    // last attempt prove nothing yet.
    await stack.db.query(
      `UPDATE idempotency_keys SET last_attempt_at = now() - interval '1 minute' WHERE key = 'p10'`,
    );
    const deps = stack.app.services.deps;
    await reconcileUnknownPayments(
      { ...deps, config: { ...deps.config, providerApplyWindowMs: 3_600_000 } },
      'reconciliation',
    );
    expect(await keyRow('p10')).toMatchObject({ state: 'unknown' });
  });

  it('a declined charge found by reconciliation ends FAILED with its code', async () => {
    const first = await send(inputFor('p11', 'pm_card_unreachable'));
    expect(errorCodeOf(first)).toBe('OUTCOME_PENDING');
    const { rows } = await stack.db.query<{ provider_key: string }>(
      `SELECT provider_key FROM payments WHERE id = $1`,
      [paymentIdOf(first)],
    );
    // The provider's books hold a declined charge under the payment's key.
    const injected = await fetch(new URL('/v1/charges', stack.sandbox.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': rows[0]!.provider_key },
      body: JSON.stringify({
        amount: '12.00',
        currency: 'EUR',
        paymentMethod: 'pm_card_declined',
        reference: 'p11',
        capture: true,
      }),
    });
    expect(injected.status).toBe(402);
    const chargeId = ((await injected.json()) as { charge: { id: string } }).charge.id;
    await reconcileUnknownPayments(stack.app.services.deps, 'reconciliation');
    const settled = await send(inputFor('p11', 'pm_card_unreachable'));
    expect(paymentOf(settled)).toMatchObject({
      status: 'FAILED',
      failureCode: 'CARD_DECLINED',
      providerReference: chargeId,
    });
  });

  it('a claim at a token the row has moved past is refused', async () => {
    expect(errorCodeOf(await send(inputFor('p12a', 'pm_card_unreachable')))).toBe(
      'OUTCOME_PENDING',
    );
    const token = BigInt((await keyRow('p12a'))['fencing_token'] as string);
    const stale = await claimForSettlement(stack.app.services.deps.engine.deps, {
      scope: scopeOf('p12a'),
      seenToken: String(token - 1n),
    });
    expect(stale).toBeNull();
    expect(await keyRow('p12a')).toMatchObject({ state: 'unknown' });
  });

  it('two concurrent reconciliations settle a request once', async () => {
    expect(errorCodeOf(await send(inputFor('p12b', 'pm_card_unreachable')))).toBe(
      'OUTCOME_PENDING',
    );
    await stack.db.query(
      `UPDATE idempotency_keys SET last_attempt_at = now() - interval '1 hour' WHERE key = 'p12b'`,
    );
    const reports = await Promise.all([
      reconcileUnknownPayments(stack.app.services.deps, 'reconciliation'),
      reconcileUnknownPayments(stack.app.services.deps, 'reconciliation'),
    ]);
    expect(reports).toHaveLength(2);
    const { rows } = await stack.db.query(
      `SELECT action FROM idempotency_interventions WHERE key = 'p12b'`,
    );
    expect(rows).toEqual([{ action: 'reconciled_charge_absent' }]);
    expect(await keyRow('p12b')).toMatchObject({ state: 'finished' });
  });

  it('a payment that left PROCESSING under its request fails the final phase: nothing of it commits', async () => {
    // Nothing else moves a PROCESSING payment while its request holds the lease; if something
    // did, RECORD_CHARGE_OUTCOME fails its own statement, and the fence, the stored answer and
    // the event sent with it in one round trip are skipped and rolled back.
    stack.app.faults.arm('createPayment.provider_charge.after-call', {
      kind: 'call',
      run: async () =>
        void (await stack.db.query(
          `UPDATE payments SET status = 'CANCELED' WHERE reference = 'p14c' AND status = 'PROCESSING'`,
        )),
    });
    let answer: GraphQLAnswer;
    try {
      answer = await send(inputFor('p14c', 'pm_card_visa'));
    } finally {
      stack.app.faults.disarm('createPayment.provider_charge.after-call');
    }
    expect(answer.status).not.toBe(200);
    // Refused by the payment's own check, not by a fence or the connection.
    expect(String(stack.errors.at(-1))).toContain(`left PROCESSING before its outcome`);
    expect(await keyRow('p14c')).toMatchObject({ state: 'started' });
    const { rows: payments } = await stack.db.query(
      `SELECT status FROM payments WHERE reference = 'p14c'`,
    );
    expect(payments).toEqual([{ status: 'CANCELED' }]);
    const { rows: events } = await stack.db.query(
      `SELECT e.id FROM outbox_events e JOIN payments p ON e.id LIKE '%' || p.id || '%'
        WHERE p.reference = 'p14c'`,
    );
    expect(events).toEqual([]);
  });

  it('a final phase lost to the database hands the request on at once', async () => {
    stack.app.faults.arm('createPayment.finished.before-commit', {
      kind: 'call',
      run: async () =>
        void (await stack.db.query(
          `SELECT pg_terminate_backend(pid, 2000) FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'payments-services'`,
        )),
    });
    try {
      await send(inputFor('p15', 'pm_card_visa'));
    } finally {
      stack.app.faults.disarm('createPayment.finished.before-commit');
    }
    expect(await keyRow('p15')).toMatchObject({
      state: 'started',
      last_attempt_outcome: 'interrupted',
      lease_expired: true,
    });
    const retry = await send(inputFor('p15', 'pm_card_visa'));
    expect(paymentOf(retry).status).toBe('SUCCEEDED');
  });

  it('resolve refuses a started request even with an expired lease', async () => {
    expect(errorCodeOf(await send(inputFor('p16', 'pm_card_unavailable')))).toBe(
      'PROVIDER_UNAVAILABLE',
    );
    await expect(resolveByHandAsNotCharged(stack, 'p16')).rejects.toMatchObject({
      data: { code: 'CONFLICT' },
    });
    expect(await keyRow('p16')).toMatchObject({ state: 'started' });
  });
});
