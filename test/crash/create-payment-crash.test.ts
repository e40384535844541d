import { describe, expect, it } from 'vitest';
import {
  CREATE_PAYMENT_FAULT_POINTS,
  CREATE_PAYMENT_POINTS,
} from '../../services/payments/create-payment.flow.ts';
import {
  NOTHING_TO_RESUME_WAIT_MS,
  RECOVERY_WORKER_OFF,
  RECOVERY_WORKER_ON,
  useGatewayProcessRig,
} from '../support/gateway-process-rig.ts';
import { graphql, paymentOf } from '../support/graphql-client.ts';
import { CREATE_PAYMENT, createUntilFinal } from '../support/operations.ts';
import { paymentInput, TENANT_A } from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';
import { committedPhases } from '../support/committed-phases.ts';

/**
 * For every fault point of createPayment: a real gateway process is SIGKILLed exactly there,
 * a new process is started, and the payment must complete with exactly one provider charge and
 * every phase committed once — by a client retry, and by the recovery worker with no client.
 */
const rig = useGatewayProcessRig('crash');

/**
 * Nothing left to resume: the kill came before admission's round trip was sent. At
 * `…commit-sent` it had been, COMMIT included, and PostgreSQL commits it without the process:
 * that point is resumed like `…after-commit`.
 */
const BEFORE_ANY_COMMIT = 'createPayment.provider_charge_sent.before-commit';

async function crashAt(point: string, input: Record<string, unknown>): Promise<void> {
  const victim = await rig.startGateway({ ...RECOVERY_WORKER_OFF, FAULT_POINTS: `${point}=crash` });
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
  return (await committedPhases(rig.db, key)).map((p) => p.recovery_point);
}

async function keyState(key: string): Promise<string | undefined> {
  const { rows } = await rig.db.query<{ state: string }>(
    'SELECT state FROM idempotency_keys WHERE key = $1',
    [key],
  );
  return rows[0]?.state;
}

function inputFor(key: string): Record<string, unknown> {
  return paymentInput(key, { amount: '12.34' });
}

describe.each(CREATE_PAYMENT_FAULT_POINTS)('SIGKILL at %s', (point) => {
  it('a client retry with the same key completes the payment exactly once', async () => {
    const key = `retry.${point}`;
    await crashAt(point, inputFor(key));
    await rig.withGateway(RECOVERY_WORKER_OFF, async (healed) => {
      const answer = await createUntilFinal(healed.url, {
        apiKey: TENANT_A.apiKey,
        input: inputFor(key),
        deadlineMs: 20_000,
      });
      expect(paymentOf(answer).status).toBe('SUCCEEDED');
      expect(rig.sandbox.charges({ reference: key })).toHaveLength(1);
      expect(await phasesOf(key)).toEqual([
        CREATE_PAYMENT_POINTS.chargeSent,
        CREATE_PAYMENT_POINTS.finished,
      ]);
      const { rows } = await rig.db.query('SELECT 1 FROM payments WHERE reference = $1', [key]);
      expect(rows).toHaveLength(1);
    });
  });

  it('the recovery worker alone completes the payment exactly once', async () => {
    const key = `worker.${point}`;
    await crashAt(point, inputFor(key));
    await rig.withGateway(RECOVERY_WORKER_ON, async (healed) => {
      if (point === BEFORE_ANY_COMMIT) {
        // The kill rolled the admission back: nothing was stored and nothing charged, so there
        // is nothing for the worker to do; the client's retry is then a first request.
        await new Promise((resolve) => setTimeout(resolve, NOTHING_TO_RESUME_WAIT_MS));
        expect(await keyState(key)).toBeUndefined();
        expect(rig.sandbox.attempts({ reference: key })).toBe(0);
      } else {
        await waitUntil(async () => (await keyState(key)) === 'finished', {
          timeoutMs: 20_000,
          what: () => `the worker to finish ${key}:\n${healed.output()}`,
        });
        expect(rig.sandbox.charges({ reference: key })).toHaveLength(1);
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
      expect(rig.sandbox.charges({ reference: key })).toHaveLength(1);
    });
  });
});
