import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxPsp, type SandboxPsp } from '../../sandbox-psp/sandbox-server.ts';
import {
  CREATE_PAYMENT_FAULT_POINTS,
  CREATE_PAYMENT_POINTS,
} from '../../services/payments/create-payment.flow.ts';
import { startGatewayProcess } from '../support/gateway-process.ts';
import { graphql, paymentOf } from '../support/graphql-client.ts';
import { CREATE_PAYMENT, createUntilFinal } from '../support/operations.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { TENANT_A } from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';

/**
 * For every fault point of createPayment: a real gateway process is SIGKILLed exactly there,
 * a new process is started, and the payment must complete with exactly one provider charge and
 * every phase committed once — by a client retry, and by the recovery worker with no client.
 */
const database = useTestDatabase('crash');
let sandbox: SandboxPsp;
let db: pg.Pool;

/** Short lease so takeovers happen within the test; far above one visa round trip. */
const LEASE_MS = '1000';
const WORKER_OFF = { RECOVERY_INTERVAL_MS: '3600000', LEASE_MS };
const WORKER_ON = { RECOVERY_INTERVAL_MS: '100', LEASE_MS };
/**
 * After a kill that rolled the admission back, how long to watch for a resume that must not
 * happen: past one lease, so a worker that found something to take over would have done so.
 */
const NOTHING_TO_RESUME_WAIT_MS = Number(LEASE_MS) + 500;
/**
 * Nothing left to resume: the kill came before admission's round trip was sent. At
 * `…commit-sent` it had been, COMMIT included, and PostgreSQL commits it without the process:
 * that point is resumed like `…after-commit`.
 */
const BEFORE_ANY_COMMIT = 'createPayment.provider_charge_sent.before-commit';

beforeAll(async () => {
  sandbox = await startSandboxPsp();
  db = new pg.Pool({ connectionString: database.url, max: 2 });
});
afterAll(async () => {
  await sandbox?.close();
  await db?.end();
});

async function crashAt(point: string, input: Record<string, unknown>): Promise<void> {
  const victim = await startGatewayProcess({
    databaseUrl: database.url,
    pspUrl: sandbox.url,
    env: { ...WORKER_OFF, FAULT_POINTS: `${point}=crash` },
  });
  try {
    await expect(
      graphql(victim.url, { apiKey: TENANT_A.apiKey, query: CREATE_PAYMENT, variables: { input } }),
    ).rejects.toThrow();
    expect(await victim.exited).toMatchObject({ signal: 'SIGKILL' });
  } finally {
    await victim.kill('SIGKILL');
  }
}

async function phasesOf(key: string): Promise<string[]> {
  const { rows } = await db.query<{ recovery_point: string }>(
    'SELECT recovery_point FROM idempotency_phase_log WHERE key = $1 ORDER BY committed_at',
    [key],
  );
  return rows.map((r) => r.recovery_point);
}

async function keyState(key: string): Promise<string | undefined> {
  const { rows } = await db.query<{ state: string }>(
    'SELECT state FROM idempotency_keys WHERE key = $1',
    [key],
  );
  return rows[0]?.state;
}

function inputFor(key: string): Record<string, unknown> {
  return {
    idempotencyKey: key,
    amount: '12.34',
    currency: 'EUR',
    paymentMethod: 'pm_card_visa',
    reference: key,
  };
}

describe.each(CREATE_PAYMENT_FAULT_POINTS)('SIGKILL at %s', (point) => {
  it('a client retry with the same key completes the payment exactly once', async () => {
    const key = `retry.${point}`;
    await crashAt(point, inputFor(key));
    const healed = await startGatewayProcess({
      databaseUrl: database.url,
      pspUrl: sandbox.url,
      env: WORKER_OFF,
    });
    try {
      const answer = await createUntilFinal(healed.url, {
        apiKey: TENANT_A.apiKey,
        input: inputFor(key),
        deadlineMs: 20_000,
      });
      expect(paymentOf(answer).status).toBe('SUCCEEDED');
      expect(sandbox.charges({ reference: key })).toHaveLength(1);
      expect(await phasesOf(key)).toEqual([
        CREATE_PAYMENT_POINTS.chargeSent,
        CREATE_PAYMENT_POINTS.finished,
      ]);
      const { rows } = await db.query('SELECT 1 FROM payments WHERE reference = $1', [key]);
      expect(rows).toHaveLength(1);
    } finally {
      await healed.kill('SIGTERM');
    }
  });

  it('the recovery worker alone completes the payment exactly once', async () => {
    const key = `worker.${point}`;
    await crashAt(point, inputFor(key));
    const healed = await startGatewayProcess({
      databaseUrl: database.url,
      pspUrl: sandbox.url,
      env: WORKER_ON,
    });
    try {
      if (point === BEFORE_ANY_COMMIT) {
        // The kill rolled the admission back: nothing was stored and nothing charged, so there
        // is nothing for the worker to do; the client's retry is then a first request.
        await new Promise((resolve) => setTimeout(resolve, NOTHING_TO_RESUME_WAIT_MS));
        expect(await keyState(key)).toBeUndefined();
        expect(sandbox.attempts({ reference: key })).toBe(0);
      } else {
        await waitUntil(async () => (await keyState(key)) === 'finished', {
          timeoutMs: 20_000,
          what: () => `the worker to finish ${key}:\n${healed.output()}`,
        });
        expect(sandbox.charges({ reference: key })).toHaveLength(1);
        expect(await phasesOf(key)).toEqual([
          CREATE_PAYMENT_POINTS.chargeSent,
          CREATE_PAYMENT_POINTS.finished,
        ]);
      }
      const answer = await createUntilFinal(healed.url, {
        apiKey: TENANT_A.apiKey,
        input: inputFor(key),
        deadlineMs: 10_000,
      });
      expect(paymentOf(answer).status).toBe('SUCCEEDED');
      const replayed = (
        answer.body.data?.['createPayment'] as { idempotency: { replayed: boolean } }
      ).idempotency.replayed;
      expect(replayed).toBe(point !== BEFORE_ANY_COMMIT);
      expect(sandbox.charges({ reference: key })).toHaveLength(1);
    } finally {
      await healed.kill('SIGTERM');
    }
  });
});
