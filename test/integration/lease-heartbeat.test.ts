import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LeaseLostError } from '../../lib/errors.ts';
import { CREATE_PAYMENT as CREATE_PAYMENT_OP } from '../../services/payments/create-payment.flow.ts';
import { resolveWithProvider } from '../../services/payments/provider-resolution.ts';
import { errorCodeOf, graphql, paymentOf, type GraphQLAnswer } from '../support/graphql-client.ts';
import { startGatewayProcess } from '../support/gateway-process.ts';
import { CREATE_PAYMENT } from '../support/operations.ts';
import { keyRowOf, paymentInput, TENANT_A, useTestStackOn } from '../support/test-stack.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { untilCharging } from '../support/until-charging.ts';
import { waitUntil } from '../support/wait-until.ts';
import { committedPhases } from '../support/committed-phases.ts';

/**
 * Leases that never abandon a live owner (lease-heartbeat.ts): an owner waiting on a provider
 * call longer than its lease renews it, so neither a duplicate nor the recovery worker takes
 * its request over; an owner that stops (SIGSTOP) renews nothing, is taken over once its lease
 * runs out, and its late writes are refused.
 */
/** Two seconds (beats every 667 ms), so a loaded CI machine's pauses cannot pass for a death. */
const LEASE_MS = 2_000;
/** pm_card_slow here: three leases. */
const SLOW_MS = 3 * LEASE_MS;
/** Longer than the slow card, so its call is an answer, never a timeout. */
const PROVIDER_TIMEOUT_MS = 10_000;
const database = useTestDatabase('lease_heartbeat');
const stack = useTestStackOn(database, {
  sandbox: { slowMs: SLOW_MS },
  // One provider attempt per call, so pm_card_unavailable's 503 ends an attempt (a release).
  app: { leaseMs: LEASE_MS, providerTimeoutMs: PROVIDER_TIMEOUT_MS, providerMaxAttempts: 1 },
});

const send = (url: string, key: string, headers: Record<string, string> = {}) =>
  graphql(url, {
    apiKey: TENANT_A.apiKey,
    query: CREATE_PAYMENT,
    variables: { input: paymentInput(key, { paymentMethod: 'pm_card_slow' }) },
    headers,
  });

const phasesOf = (key: string) => committedPhases(stack.db, key);

const replayedOf = (answer: GraphQLAnswer) =>
  (answer.body.data?.['createPayment'] as { idempotency: { replayed: boolean } }).idempotency
    .replayed;

describe('an owner whose provider call outlasts its lease', () => {
  it('keeps its request: it answers the payment, no duplicate or worker takes over, one charge', async () => {
    const key = 'hb-slow';
    const original = send(stack.app.url, key);
    // Sent once the original holds the key: sent on a timer instead, a loaded machine could
    // let the duplicate in first, and the two would swap roles.
    await waitUntil(async () => (await keyRowOf(stack.db, key)) !== undefined, {
      timeoutMs: 10_000,
      intervalMs: 10,
      what: `${key} admitted`,
    });
    const duplicate = send(stack.app.url, key, { prefer: 'wait=10' });
    let done = false;
    // Either way: a `finally` would make a second promise, unhandled if the request failed.
    const settled = () => (done = true);
    original.then(settled, settled);
    let claimed = 0;
    while (!done) {
      claimed += await stack.app.services.worker.sweepOnce();
      await new Promise((resolve) => setTimeout(resolve, 250));
    }

    const first = await original;
    expect(paymentOf(first).status).toBe('SUCCEEDED');
    expect(replayedOf(first)).toBe(false);
    const waited = await duplicate;
    expect(paymentOf(waited)).toEqual(paymentOf(first));
    expect(replayedOf(waited)).toBe(true);
    expect(claimed).toBe(0);
    expect(await phasesOf(key)).toEqual([
      { recovery_point: 'provider_charge_sent', fencing_token: '1' },
      { recovery_point: 'finished', fencing_token: '1' },
    ]);
    expect(stack.sandbox.charges({ reference: key })).toHaveLength(1);
  });
});

describe('an owner that stops (SIGSTOP) during its provider call', () => {
  it('is taken over once its lease runs out, and its late writes are refused', async () => {
    const key = 'hb-stopped';
    const gateway = await startGatewayProcess({
      databaseUrl: database.url,
      pspUrl: stack.sandbox.url,
      env: {
        LEASE_MS: String(LEASE_MS),
        PROVIDER_TIMEOUT_MS: String(PROVIDER_TIMEOUT_MS),
        RECOVERY_INTERVAL_MS: '3600000',
      },
    });
    try {
      const stopped = send(gateway.url, key);
      await untilCharging(stack.sandbox, key);
      gateway.child.kill('SIGSTOP');
      // Run out by the database's clock: a beat sent just before the stop may still be carried
      // out late by a loaded server and push the lease on, so no fixed wait is long enough.
      await waitUntil(
        async () =>
          (
            await stack.db.query<{ out: boolean }>(
              'SELECT lease_expires_at <= now() AS out FROM idempotency_keys WHERE key = $1',
              [key],
            )
          ).rows[0]?.out === true,
        { timeoutMs: 10_000, intervalMs: 50, what: "the stopped owner's lease to run out" },
      );

      const taker = await send(stack.app.url, key);
      expect(paymentOf(taker).status).toBe('SUCCEEDED');
      expect(replayedOf(taker)).toBe(false);

      gateway.child.kill('SIGCONT');
      expect(errorCodeOf(await stopped)).toBe('IDEMPOTENCY_KEY_IN_USE');
      expect(await phasesOf(key)).toEqual([
        { recovery_point: 'provider_charge_sent', fencing_token: '1' },
        { recovery_point: 'finished', fencing_token: '2' },
      ]);
      expect(stack.sandbox.charges({ reference: key })).toHaveLength(1);
      const replay = await send(stack.app.url, key);
      expect(paymentOf(replay)).toEqual(paymentOf(taker));
    } finally {
      gateway.child.kill('SIGCONT');
      await gateway.kill('SIGTERM');
    }
  });
});

/** A fleet gauge of createPayment, as /metrics shows it now. */
async function gauge(name: string): Promise<number> {
  const text = await (await fetch(`${stack.app.url}/metrics`)).text();
  const line = new RegExp(
    `^${name}\\{service="payments",operation="createPayment"\\} (\\S+)$`,
    'm',
  );
  return Number(line.exec(text)?.[1] ?? NaN);
}

describe('the gauges that find stuck requests', () => {
  it('count a stopped owner’s lease as stale once it runs out, and nothing once recovered', async () => {
    let unstick!: () => void;
    const stuck = new Promise<void>((resolve) => (unstick = resolve));
    // The first owner is wedged before its provider call: alive, but renewing nothing. Whoever
    // resumes it later passes.
    let reached = 0;
    stack.app.faults.arm('createPayment.provider_charge.before-call', {
      kind: 'call',
      run: () => (++reached === 1 ? stuck : undefined),
    });
    const owner = graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: CREATE_PAYMENT,
      variables: { input: paymentInput('hb-stuck') },
    });
    try {
      await waitUntil(
        async () =>
          (await stack.db.query(`SELECT 1 FROM idempotency_keys WHERE key = 'hb-stuck'`))
            .rowCount === 1,
        { timeoutMs: 10_000, intervalMs: 10, what: 'the stuck request to be admitted' },
      );
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS / 4));
      expect(await gauge('idempotency_in_progress_age_max_seconds')).toBeGreaterThan(0);
      expect(await gauge('idempotency_stale_leases')).toBe(0); // its lease is still live

      await new Promise((resolve) => setTimeout(resolve, LEASE_MS));
      expect(await gauge('idempotency_stale_leases')).toBe(1);
      expect(await gauge('idempotency_in_progress_age_max_seconds')).toBeGreaterThan(1);

      expect(await stack.app.services.worker.sweepOnce()).toBe(1);
      expect(await gauge('idempotency_stale_leases')).toBe(0);
      expect(await gauge('idempotency_in_progress_age_max_seconds')).toBe(0);
    } finally {
      stack.app.faults.disarm('createPayment.provider_charge.before-call');
      unstick();
    }
    expect(errorCodeOf(await owner)).toBe('IDEMPOTENCY_KEY_IN_USE');
  });

  it('do not count a request released on purpose to back off as a stale lease', async () => {
    const refused = await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: CREATE_PAYMENT,
      variables: { input: paymentInput('hb-released', { paymentMethod: 'pm_card_unavailable' }) },
    });
    expect(errorCodeOf(refused)).toBe('PROVIDER_UNAVAILABLE');
    const { rows } = await stack.db.query<{ expired: boolean }>(
      `SELECT state = 'started' AND lease_expires_at <= now() AS expired
         FROM idempotency_keys WHERE key = 'hb-released'`,
    );
    expect(rows).toEqual([{ expired: true }]);
    expect(await gauge('idempotency_stale_leases')).toBe(0);
    expect(await gauge('idempotency_in_progress_age_max_seconds')).toBeGreaterThan(0);
  });
});

describe('an owner whose request is taken over while it waits', () => {
  it('learns it from its heartbeat and stops before its next provider call', async () => {
    const key = 'hb-taken';
    const admission = await stack.app.services.deps.engine.admit({
      scope: { tenantId: stack.tenantIds.a, operation: CREATE_PAYMENT_OP, key },
      command: { note: key },
      first: { to: 'provider_charge_sent', resourceId: randomUUID(), statements: [] },
    });
    if (admission.kind !== 'owned') throw new Error(`expected owned, got ${admission.kind}`);
    const calls: string[] = [];
    const resolution = resolveWithProvider(admission.request, {
      resumed: false,
      timeoutMs: PROVIDER_TIMEOUT_MS,
      send: async () => {
        calls.push('send');
        // Meanwhile another owner takes the request over (as after a long pause of ours).
        await stack.db.query(
          `UPDATE idempotency_keys SET fencing_token = fencing_token + 1 WHERE key = $1`,
          [key],
        );
        // Long enough for a beat to find the token gone; then no answer, as a timeout.
        await new Promise((resolve) => setTimeout(resolve, LEASE_MS / 2));
        return { kind: 'timeout' };
      },
      probe: () => {
        calls.push('probe');
        return Promise.resolve({ kind: 'missing' });
      },
    });
    await expect(resolution).rejects.toBeInstanceOf(LeaseLostError);
    expect(calls).toEqual(['send']);
  });
});
