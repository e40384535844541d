import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CREATE_PAYMENT_FAULT_POINTS,
  CREATE_PAYMENT_POINTS,
} from '../../services/payments/create-payment.flow.ts';
import type { GatewayProcess, ServiceProcess } from '../support/gateway-process.ts';
import {
  RECOVERY_WORKER_OFF,
  RECOVERY_WORKER_ON,
  SPLIT_FINAL_DEADLINE_MS,
  useGatewayProcessRig,
  GATEWAY_SIDE,
} from '../support/gateway-process-rig.ts';
import { errorCodeOf, graphql, paymentOf } from '../support/graphql-client.ts';
import { CREATE_PAYMENT, createUntilFinal } from '../support/operations.ts';
import {
  freePort,
  startProviderProcess,
  type ProviderProcess,
} from '../support/provider-process.ts';
import { paymentInput, TENANT_A } from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';
import { committedPhases } from '../support/committed-phases.ts';

/**
 * create-payment-crash.test.ts in the split topology: for every fault point of createPayment,
 * the payments process running the payment is SIGKILLed exactly there, behind its own gateway;
 * another gateway and another payments process, each its own process, must complete it with
 * one provider charge and every phase committed once: by the client's retry, and by that
 * payments process's recovery worker with no client. The provider runs in a process of its own.
 */
const rig = useGatewayProcessRig('split_crash');

describe('createPayment with payments in processes of their own', () => {
  let provider: ProviderProcess;
  /** The victim's gateway, and the healer's: each reaches one payments port for the file. */
  let victimGateway: GatewayProcess;
  let healerGateway: GatewayProcess;
  const ports = { victim: 0, healer: 0 };

  const payments = (port: number, env: Record<string, string>) =>
    rig.startServices({
      services: 'payments',
      serviceUrls: `provider=${provider.url}`,
      port,
      env,
    });
  const gatewayAt = (port: number) =>
    rig.startGateway({
      ...RECOVERY_WORKER_OFF,
      SERVICES: GATEWAY_SIDE,
      SERVICE_URLS: `payments=http://127.0.0.1:${port}/trpc`,
      PSP_URL: '',
    });

  beforeAll(async () => {
    provider = await startProviderProcess({ pspUrl: rig.sandbox.url, port: 0 });
    ports.victim = await freePort();
    ports.healer = await freePort();
    victimGateway = await gatewayAt(ports.victim);
    healerGateway = await gatewayAt(ports.healer);
  });
  afterAll(async () => {
    await victimGateway?.kill('SIGTERM');
    await healerGateway?.kill('SIGTERM');
    await provider?.kill('SIGTERM');
  });

  /** The payments process dies at `point`; its gateway's client is told to come back. */
  async function crashAt(point: string, input: Record<string, unknown>): Promise<void> {
    const victim = await payments(ports.victim, {
      ...RECOVERY_WORKER_OFF,
      FAULT_POINTS: `${point}=crash`,
    });
    try {
      const answer = await graphql(victimGateway.url, {
        apiKey: TENANT_A.apiKey,
        query: CREATE_PAYMENT,
        variables: { input },
      });
      expect(errorCodeOf(answer)).toBe('SERVICE_UNAVAILABLE');
      expect(await victim.exited).toMatchObject({ signal: 'SIGKILL' });
    } finally {
      await victim.kill('SIGKILL');
    }
  }

  async function withHealer<T>(
    env: Record<string, string>,
    body: (healer: ServiceProcess) => Promise<T>,
  ): Promise<T> {
    const healer = await payments(ports.healer, env);
    try {
      return await body(healer);
    } finally {
      await healer.kill('SIGTERM');
    }
  }

  async function phasesOf(key: string): Promise<string[]> {
    return (await committedPhases(rig.db, key)).map((p) => p.recovery_point);
  }

  const keyFinished = async (key: string) => {
    const { rows } = await rig.db.query<{ state: string }>(
      'SELECT state FROM idempotency_keys WHERE key = $1',
      [key],
    );
    return rows[0]?.state === 'finished';
  };

  const inputFor = (key: string) => paymentInput(key, { amount: '12.34' });

  /** Nothing is left to resume when the kill came before admission's round trip was sent. */
  const BEFORE_ANY_COMMIT = 'createPayment.provider_charge_sent.before-commit';

  describe.each(CREATE_PAYMENT_FAULT_POINTS)('SIGKILL at %s', (point) => {
    it('the retry through the other gateway and payments process completes it once', async () => {
      const key = `split-retry.${point}`;
      await crashAt(point, inputFor(key));
      await withHealer(RECOVERY_WORKER_OFF, async () => {
        const answer = await createUntilFinal(healerGateway.url, {
          apiKey: TENANT_A.apiKey,
          input: inputFor(key),
          deadlineMs: SPLIT_FINAL_DEADLINE_MS,
        });
        expect(paymentOf(answer).status).toBe('SUCCEEDED');
        expect(rig.sandbox.charges({ reference: key })).toHaveLength(1);
        expect(await phasesOf(key)).toEqual([
          CREATE_PAYMENT_POINTS.chargeSent,
          CREATE_PAYMENT_POINTS.finished,
        ]);
      });
    });

    it('the other payments process’s recovery worker completes it once, with no client', async () => {
      const key = `split-worker.${point}`;
      await crashAt(point, inputFor(key));
      await withHealer(RECOVERY_WORKER_ON, async (healer) => {
        if (point !== BEFORE_ANY_COMMIT) {
          await waitUntil(() => keyFinished(key), {
            timeoutMs: SPLIT_FINAL_DEADLINE_MS,
            what: () => `the worker to finish ${key}:\n${healer.output()}`,
          });
          expect(await phasesOf(key)).toEqual([
            CREATE_PAYMENT_POINTS.chargeSent,
            CREATE_PAYMENT_POINTS.finished,
          ]);
        }
        const answer = await createUntilFinal(healerGateway.url, {
          apiKey: TENANT_A.apiKey,
          input: inputFor(key),
          deadlineMs: SPLIT_FINAL_DEADLINE_MS,
        });
        expect(paymentOf(answer).status).toBe('SUCCEEDED');
        expect(rig.sandbox.charges({ reference: key })).toHaveLength(1);
      });
    });
  });
});
