import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxPsp, type SandboxPsp } from '../../sandbox-psp/sandbox-server.ts';
import { CAPTURE_PAYMENT_FAULT_POINTS } from '../../services/payments/capture-payment.flow.ts';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.ts';
import {
  CREATE_PAYMENT,
  graphql,
  paymentOf,
  type GraphQLAnswer,
} from '../support/graphql-client.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { TENANT_A } from '../support/test-stack.ts';

/**
 * For every fault point of capturePayment: a real gateway is SIGKILLed there and restarted; the
 * capture completes with exactly one capture applied at the provider and each phase committed
 * once — by a client retry, and by the recovery worker with no client.
 */
const database = useTestDatabase('capture-crash');
const LEASE_MS = '1000';
const WORKER_OFF = { RECOVERY_INTERVAL_MS: '3600000', LEASE_MS };
const WORKER_ON = { RECOVERY_INTERVAL_MS: '100', LEASE_MS };
const BEFORE_ANY_COMMIT = 'capturePayment.provider_capture_sent.before-commit';
const CAPTURE = `mutation($input: CapturePaymentInput!) { capturePayment(input: $input) { payment { id status amountCaptured } } }`;
let sandbox: SandboxPsp;
let db: pg.Pool;

beforeAll(async () => {
  sandbox = await startSandboxPsp();
  db = new pg.Pool({ connectionString: database.url, max: 2 });
});
afterAll(async () => {
  await sandbox?.close();
  await db?.end();
});

function sendCapture(url: string, input: Record<string, unknown>): Promise<GraphQLAnswer> {
  return graphql(url, { apiKey: TENANT_A.apiKey, query: CAPTURE, variables: { input } });
}

async function captureUntilFinal(
  url: string,
  input: Record<string, unknown>,
): Promise<GraphQLAnswer> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const answer = await sendCapture(url, input).catch(() => undefined);
    const code = answer?.body.errors?.[0]?.extensions?.['code'];
    if (answer && code !== 'IDEMPOTENCY_KEY_IN_USE' && code !== 'OUTCOME_PENDING') return answer;
    if (Date.now() > deadline) throw new Error(`capture not final: ${String(code)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Authorises a MANUAL payment through `victim`, then sends the capture that kills it. */
async function crashDuringCapture(
  victim: GatewayProcess,
  key: string,
): Promise<{ paymentId: string; chargeId: string }> {
  const created = await graphql(victim.url, {
    apiKey: TENANT_A.apiKey,
    query: CREATE_PAYMENT,
    variables: {
      input: {
        idempotencyKey: `${key}.create`,
        amount: '9.00',
        currency: 'EUR',
        paymentMethod: 'pm_card_visa',
        captureMethod: 'MANUAL',
        reference: key,
      },
    },
  });
  const payment = paymentOf(created);
  await expect(
    sendCapture(victim.url, { idempotencyKey: key, paymentId: payment.id }),
  ).rejects.toThrow();
  expect(await victim.exited).toMatchObject({ signal: 'SIGKILL' });
  return { paymentId: payment.id, chargeId: payment.providerReference! };
}

async function phasesOf(key: string): Promise<string[]> {
  const { rows } = await db.query<{ recovery_point: string }>(
    `SELECT recovery_point FROM idempotency_phase_log WHERE key = $1 AND operation = 'payments.capture.v1' ORDER BY committed_at`,
    [key],
  );
  return rows.map((r) => r.recovery_point);
}

const appliedCaptures = (chargeId: string) =>
  sandbox.operations({ chargeId }).filter((o) => o.kind === 'capture' && o.applied).length;

describe.each(CAPTURE_PAYMENT_FAULT_POINTS)('SIGKILL at %s', (point) => {
  it('a client retry completes the capture exactly once', async () => {
    const key = `cap-retry.${point}`;
    const victim = await startGatewayProcess({
      databaseUrl: database.url,
      pspUrl: sandbox.url,
      env: { ...WORKER_OFF, FAULT_POINTS: `${point}=crash` },
    });
    const { paymentId, chargeId } = await crashDuringCapture(victim, key);
    const healed = await startGatewayProcess({
      databaseUrl: database.url,
      pspUrl: sandbox.url,
      env: WORKER_OFF,
    });
    try {
      const answer = await captureUntilFinal(healed.url, { idempotencyKey: key, paymentId });
      expect(answer.body.data?.['capturePayment']).toMatchObject({
        payment: { status: 'SUCCEEDED', amountCaptured: '9.00' },
      });
      expect(appliedCaptures(chargeId)).toBe(1);
      expect(await phasesOf(key)).toEqual(['provider_capture_sent', 'finished']);
    } finally {
      await healed.kill('SIGTERM');
    }
  });

  it('the recovery worker alone completes the capture exactly once', async () => {
    const key = `cap-worker.${point}`;
    const victim = await startGatewayProcess({
      databaseUrl: database.url,
      pspUrl: sandbox.url,
      env: { ...WORKER_OFF, FAULT_POINTS: `${point}=crash` },
    });
    const { paymentId, chargeId } = await crashDuringCapture(victim, key);
    const healed = await startGatewayProcess({
      databaseUrl: database.url,
      pspUrl: sandbox.url,
      env: WORKER_ON,
    });
    try {
      if (point === BEFORE_ANY_COMMIT) {
        await new Promise((resolve) => setTimeout(resolve, Number(LEASE_MS) + 500));
        expect(await phasesOf(key)).toEqual([]);
        expect(appliedCaptures(chargeId)).toBe(0);
      } else {
        const deadline = Date.now() + 20_000;
        while ((await phasesOf(key)).at(-1) !== 'finished') {
          if (Date.now() > deadline)
            throw new Error(`worker did not finish ${key}:\n${healed.output()}`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        expect(appliedCaptures(chargeId)).toBe(1);
        expect(await phasesOf(key)).toEqual(['provider_capture_sent', 'finished']);
      }
      const answer = await captureUntilFinal(healed.url, { idempotencyKey: key, paymentId });
      expect(answer.body.data?.['capturePayment']).toMatchObject({
        payment: { status: 'SUCCEEDED' },
      });
      expect(appliedCaptures(chargeId)).toBe(1);
    } finally {
      await healed.kill('SIGTERM');
    }
  });
});
