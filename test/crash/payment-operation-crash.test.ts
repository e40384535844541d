import { describe, expect, it } from 'vitest';
import { CAPTURE_PAYMENT_FAULT_POINTS } from '../../services/payments/capture-payment.flow.ts';
import { REFUND_PAYMENT_FAULT_POINTS } from '../../services/payments/refund-payment.flow.ts';
import {
  NOTHING_TO_RESUME_WAIT_MS,
  RECOVERY_WORKER_OFF,
  RECOVERY_WORKER_ON,
  useGatewayProcessRig,
} from '../support/gateway-process-rig.ts';
import { graphql, paymentOf, type GraphQLAnswer } from '../support/graphql-client.ts';
import { CAPTURE_PAYMENT, CREATE_PAYMENT, REFUND_PAYMENT } from '../support/operations.ts';
import { paymentInput, TENANT_A } from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';
import { committedPhases } from '../support/committed-phases.ts';

/**
 * For every fault point of capturePayment and refundPayment: a real gateway is SIGKILLed there
 * and restarted; the operation completes with exactly one effect applied at the provider and
 * each phase committed once — by a client retry, and by the recovery worker with no client.
 */
const rig = useGatewayProcessRig('operation-crash');

interface OperationUnderTest {
  field: 'capturePayment' | 'refundPayment';
  operationId: string;
  mutation: string;
  faultPoints: readonly string[];
  sentPoint: string;
  captureMethod: 'MANUAL' | 'AUTOMATIC';
  input: (key: string, paymentId: string) => Record<string, unknown>;
  effect: 'capture' | 'refund';
}

const OPERATIONS: OperationUnderTest[] = [
  {
    field: 'capturePayment',
    operationId: 'payments.capture.v1',
    mutation: CAPTURE_PAYMENT,
    faultPoints: CAPTURE_PAYMENT_FAULT_POINTS,
    sentPoint: 'provider_capture_sent',
    captureMethod: 'MANUAL',
    input: (key, paymentId) => ({ idempotencyKey: key, paymentId }),
    effect: 'capture',
  },
  {
    field: 'refundPayment',
    operationId: 'payments.refund.v1',
    mutation: REFUND_PAYMENT,
    faultPoints: REFUND_PAYMENT_FAULT_POINTS,
    sentPoint: 'provider_refund_sent',
    captureMethod: 'AUTOMATIC',
    input: (key, paymentId) => ({ idempotencyKey: key, paymentId, amount: '4.00' }),
    effect: 'refund',
  },
];
const CASES = OPERATIONS.flatMap((op) => op.faultPoints.map((point) => ({ op, point })));

function send(
  url: string,
  run: { op: OperationUnderTest; input: Record<string, unknown> },
): Promise<GraphQLAnswer> {
  return graphql(url, {
    apiKey: TENANT_A.apiKey,
    query: run.op.mutation,
    variables: { input: run.input },
  });
}

async function untilFinal(
  url: string,
  run: { op: OperationUnderTest; input: Record<string, unknown> },
): Promise<GraphQLAnswer> {
  return waitUntil(
    async () => {
      const answer = await send(url, run);
      const code = answer.body.errors?.[0]?.extensions?.['code'];
      if (code === 'IDEMPOTENCY_KEY_IN_USE' || code === 'OUTCOME_PENDING')
        throw new Error(String(code));
      return answer;
    },
    { timeoutMs: 20_000, intervalMs: 200, what: `${run.op.field} to be final` },
  );
}

/**
 * Starts a gateway armed to die at `point`, creates the payment through it, then sends the
 * operation that kills it there.
 */
async function crashDuring(run: {
  op: OperationUnderTest;
  key: string;
  point: string;
}): Promise<{ paymentId: string; chargeId: string }> {
  const { op, key, point } = run;
  const victim = await rig.startGateway({ ...RECOVERY_WORKER_OFF, FAULT_POINTS: `${point}=crash` });
  const created = await graphql(victim.url, {
    apiKey: TENANT_A.apiKey,
    query: CREATE_PAYMENT,
    variables: { input: paymentInput(key, { amount: '9.00', captureMethod: op.captureMethod }) },
  });
  const payment = paymentOf(created);
  await expect(send(victim.url, { op, input: op.input(key, payment.id) })).rejects.toThrow();
  expect(await victim.exited).toMatchObject({ signal: 'SIGKILL' });
  return { paymentId: payment.id, chargeId: payment.providerReference! };
}

async function phasesOf(op: OperationUnderTest, key: string): Promise<string[]> {
  const phases = await committedPhases(rig.db, key, op.operationId);
  return phases.map((p) => p.recovery_point);
}

/** The ledger effect: exactly one posting of the operation's kind, once the outbox delivered it. */
async function assertPostedOnce(op: OperationUnderTest, paymentId: string): Promise<void> {
  const count = async () =>
    (
      await rig.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ledger_postings WHERE payment_id = $1 AND kind = $2`,
        [paymentId, op.effect],
      )
    ).rows[0]?.n ?? 0;
  await waitUntil(async () => (await count()) > 0, {
    timeoutMs: 10_000,
    what: `a ${op.effect} posting for ${paymentId}`,
  });
  expect(await count()).toBe(1);
}

const applied = (op: OperationUnderTest, chargeId: string) =>
  rig.sandbox.operations({ chargeId }).filter((o) => o.kind === op.effect && o.applied).length;

describe.each(CASES)('SIGKILL at $point', ({ op, point }) => {
  const beforeAnyCommit = `${op.field}.${op.sentPoint}.before-commit`;

  it('a client retry completes the operation exactly once', async () => {
    const key = `retry.${point}`;
    const { paymentId, chargeId } = await crashDuring({ op, key, point });
    await rig.withGateway(RECOVERY_WORKER_OFF, async (healed) => {
      const answer = await untilFinal(healed.url, { op, input: op.input(key, paymentId) });
      expect(answer.body.data?.[op.field]).toMatchObject({ payment: { status: 'SUCCEEDED' } });
      expect(applied(op, chargeId)).toBe(1);
      expect(await phasesOf(op, key)).toEqual([op.sentPoint, 'finished']);
      await assertPostedOnce(op, paymentId);
    });
  });

  it('the recovery worker alone completes the operation exactly once', async () => {
    const key = `worker.${point}`;
    const { paymentId, chargeId } = await crashDuring({ op, key, point });
    await rig.withGateway(RECOVERY_WORKER_ON, async (healed) => {
      if (point === beforeAnyCommit) {
        // The kill rolled the admission back: nothing to resume, nothing sent.
        await new Promise((resolve) => setTimeout(resolve, NOTHING_TO_RESUME_WAIT_MS));
        expect(await phasesOf(op, key)).toEqual([]);
        expect(applied(op, chargeId)).toBe(0);
      } else {
        await waitUntil(async () => (await phasesOf(op, key)).at(-1) === 'finished', {
          timeoutMs: 20_000,
          what: () => `the worker to finish ${key}:\n${healed.output()}`,
        });
        expect(applied(op, chargeId)).toBe(1);
        expect(await phasesOf(op, key)).toEqual([op.sentPoint, 'finished']);
      }
      const answer = await untilFinal(healed.url, { op, input: op.input(key, paymentId) });
      expect(answer.body.data?.[op.field]).toMatchObject({ payment: { status: 'SUCCEEDED' } });
      expect(applied(op, chargeId)).toBe(1);
      await assertPostedOnce(op, paymentId);
    });
  });
});
