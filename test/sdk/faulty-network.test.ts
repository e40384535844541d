/**
 * The SDK against the real gateway through a network that loses requests and answers
 * (test/support/fault-proxy.ts): hundreds of seeded faults, and still exactly one charge per
 * logical call, each call answered with the one payment its key made. The counts come from the
 * sandbox provider's own books (GET /v1/charges?reference=) and the database, not from the SDK.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPaymentsClient,
  type AttemptReport,
  type CreatePaymentResult,
} from '../../packages/client/src/index.ts';
import { Prng } from '../chaos/prng.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { startTestStack, TENANT_A, type TestStack } from '../support/test-stack.ts';

const database = useTestDatabase('sdk_faulty_network');
/** Replays a failing run's fault schedule: SDK_FAULT_SEED=<the seed it printed>. */
const SEED = Number(process.env['SDK_FAULT_SEED'] ?? 23_011);
const CREATES = 200;
const REFUNDS = 40;
/** Calls in flight at once: enough to make retries meet each other's keys, kind to 2 cores. */
const CONCURRENCY = 8;
/** Under the fault rate below, the expected fault count is about one per call. */
const MIN_FAULTS = 150;
/**
 * Shorter than the slowest legitimate answer here (pm_card_timeout: the stack's provider
 * timeout, 2 s, then a retry), so some attempts time out while the gateway still works on them.
 */
const ATTEMPT_TIMEOUT_MS = 1_500;
/**
 * Each call may take this many attempts and this long: far more than a fault rate of one in two
 * needs, so a call that still ends without its answer is a finding, not bad luck.
 */
const MAX_ATTEMPTS = 40;
const CALL_TIMEOUT_MS = 60_000;
/** Short backoffs keep the run quick; IDEMPOTENCY_KEY_IN_USE's Retry-After still applies. */
const BACKOFF = { baseMs: 20, capMs: 400 };
/** Some holds outlast the attempt: their requests arrive after the client has moved on. */
const DELAY_MS = { min: 50, max: 2_000 };
const TOKENS = {
  pm_card_visa: 70,
  pm_card_mastercard: 15,
  pm_card_slow: 5,
  pm_card_lost_response: 5,
  pm_card_timeout: 5,
} as const;

let stack: TestStack;
let proxy: FaultProxy;

beforeAll(async () => {
  stack = await startTestStack({ databaseUrl: database.url });
  proxy = await startFaultProxy({
    target: stack.app.url,
    seed: SEED,
    weights: { pass: 50, 'drop-response': 20, 'reset-before': 10, 'reset-after': 10, delay: 10 },
    delayMs: DELAY_MS,
  });
});
afterAll(async () => {
  await proxy?.close();
  await stack?.stop();
});

/** Runs `count` tasks, `concurrency` at a time, in order of index. */
async function inPool<T>(input: {
  count: number;
  concurrency: number;
  task: (index: number) => Promise<T>;
}): Promise<T[]> {
  const results: T[] = new Array<T>(input.count);
  let next = 0;
  const worker = async () => {
    while (next < input.count) {
      const index = next++;
      results[index] = await input.task(index);
    }
  };
  await Promise.all(Array.from({ length: input.concurrency }, worker));
  return results;
}

async function chargesAtProvider(reference: string): Promise<Array<Record<string, unknown>>> {
  const url = `${stack.sandbox.url}/v1/charges?reference=${encodeURIComponent(reference)}`;
  const response = await fetch(url);
  const body = (await response.json()) as { data: Array<Record<string, unknown>> };
  return body.data;
}

async function refundsAtProvider(chargeId: string): Promise<unknown[]> {
  const response = await fetch(`${stack.sandbox.url}/v1/charges/${chargeId}/refunds`);
  return ((await response.json()) as { data: unknown[] }).data;
}

describe('the SDK through a network that loses requests and answers', () => {
  it('makes exactly one charge per logical call and answers each with its one payment', async () => {
    const jitter = Prng.derive(SEED, 'sdk-jitter');
    const reports: AttemptReport[] = [];
    const client = createPaymentsClient({
      url: `${proxy.url}/graphql`,
      apiKey: TENANT_A.apiKey,
      maxAttempts: MAX_ATTEMPTS,
      timeoutMs: CALL_TIMEOUT_MS,
      attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
      // Attempts here are shorter than any wait worth asking for.
      preferWaitSeconds: 0,
      backoff: BACKOFF,
      random: () => jitter.next(),
      onAttempt: (report) => reports.push(report),
    });
    const plan = Prng.derive(SEED, 'sdk-plan');
    const calls = Array.from({ length: CREATES }, (_, index) => ({
      reference: `sdk-net-${SEED}-${index}`,
      token: plan.weighted(TOKENS),
    }));

    const answers = await inPool<CreatePaymentResult>({
      count: CREATES,
      concurrency: CONCURRENCY,
      task: (index) => {
        const call = calls[index]!;
        return client.createPayment({
          amount: '12.34',
          currency: 'EUR',
          paymentMethod: call.token,
          reference: call.reference,
        });
      },
    });
    const createFaults = proxy.faults();

    const { rows } = await stack.db.query<{ id: string; reference: string }>(
      `SELECT id, reference FROM payments WHERE reference LIKE $1`,
      [`sdk-net-${SEED}-%`],
    );
    const paymentsByReference = new Map<string, string[]>();
    for (const row of rows) {
      paymentsByReference.set(row.reference, [
        ...(paymentsByReference.get(row.reference) ?? []),
        row.id,
      ]);
    }
    for (const [index, call] of calls.entries()) {
      const answer = answers[index]!;
      expect(answer.payment.reference).toBe(call.reference);
      expect(answer.payment.status).toBe('SUCCEEDED');
      expect(paymentsByReference.get(call.reference)).toEqual([answer.payment.id]);
      const charges = await chargesAtProvider(call.reference);
      expect(charges, `charges for ${call.reference}`).toHaveLength(1);
      expect(charges[0]?.['id']).toBe(answer.payment.providerReference);
      // Every answer on the way that named a payment (IN_USE, OUTCOME_PENDING) named this one.
      const named = reports.filter(
        (r) => r.idempotencyKey === answer.idempotency.key && r.paymentId !== undefined,
      );
      for (const report of named) expect(report.paymentId).toBe(answer.payment.id);
    }
    // One key per call, and each call's attempts all carried it.
    expect(new Set(answers.map((a) => a.idempotency.key)).size).toBe(CREATES);

    // Refunds through the same network: one refund at the provider per refund call.
    const refunded = answers.slice(0, REFUNDS);
    await inPool({
      count: REFUNDS,
      concurrency: CONCURRENCY,
      task: (index) =>
        client.refundPayment({ paymentId: refunded[index]!.payment.id, amount: '1.00' }),
    });
    for (const answer of refunded) {
      const refunds = await refundsAtProvider(answer.payment.providerReference!);
      expect(refunds, `refunds of ${answer.payment.id}`).toHaveLength(1);
    }

    // The faults happened, and the lost answers were recovered as replays of the stored result.
    const retried = reports.filter((r) => r.attempt > 1);
    const replayedFinals = reports.filter((r) => r.outcome === 'succeeded' && r.replayed);
    console.info(
      `seed ${SEED}: ${reports.length} attempts for ${CREATES + REFUNDS} calls, faults ${JSON.stringify(proxy.counts)} ` +
        `(${createFaults} during the creates), ${replayedFinals.length} calls answered by a replay, ` +
        `codes ${JSON.stringify(countBy(reports.map((r) => r.code ?? 'ok')))}`,
    );
    expect(proxy.faults()).toBeGreaterThanOrEqual(MIN_FAULTS);
    for (const kind of ['drop-response', 'reset-before', 'reset-after', 'delay'] as const) {
      expect(proxy.counts[kind], kind).toBeGreaterThan(0);
    }
    expect(retried.length).toBeGreaterThan(MIN_FAULTS / 2);
    expect(replayedFinals.length).toBeGreaterThan(0);
  }, 240_000);
});

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
