import { describe, expect, it } from 'vitest';
import { graphql, paymentOf, type GraphQLAnswer } from '../support/graphql-client.ts';
import { CANCEL_PAYMENT, CAPTURE_PAYMENT, REFUND_PAYMENT } from '../support/operations.ts';
import { createPaymentOn, paymentInput, TENANT_A, useTestStack } from '../support/test-stack.ts';

/**
 * A resume that comes after the provider has forgotten the key. Real providers keep idempotency
 * keys for a while only (Stripe: 24 hours); the sandbox here forgets them after
 * KEY_RETENTION_MS. Each operation's first attempt reaches the provider and takes effect, then
 * its owner dies before recording the answer (a fault after the call). Once both the lease and
 * the provider's memory of the key have run out, a client retry (a takeover) or the recovery
 * worker resumes it: it must ask the provider first and find the effect, not send the
 * instruction again, which the provider would now treat as new (a second charge or refund, or a
 * capture or void refused and answered as if it had failed).
 */
const LEASE_MS = 1_000;
const KEY_RETENTION_MS = 400;
/** Past the lease and the provider's retention: time must pass for both. */
const LATE_MS = LEASE_MS + 200;

const stack = useTestStack('late_resume', {
  sandbox: { keyRetentionMs: KEY_RETENTION_MS },
  app: { leaseMs: LEASE_MS },
});

const late = () => new Promise((resolve) => setTimeout(resolve, LATE_MS));

/** Runs `send` with the owner dying right after its provider call, as a crash there would. */
async function dyingAfterTheCall(
  faultPoint: string,
  send: () => Promise<GraphQLAnswer>,
): Promise<void> {
  stack.app.faults.arm(faultPoint, { kind: 'throw' });
  try {
    const answer = await send();
    expect(answer.body.errors?.[0]?.extensions?.['code']).toBe('INTERNAL_SERVER_ERROR');
  } finally {
    stack.app.faults.disarm(faultPoint);
  }
}

type Resumer = 'a client retry' | 'the recovery worker';

/** Resumes the request `send` started, by a retry of it or by a worker sweep. */
async function resume(by: Resumer, send: () => Promise<GraphQLAnswer>): Promise<GraphQLAnswer> {
  await late();
  if (by === 'the recovery worker') {
    expect(await stack.app.services.worker.sweepOnce()).toBe(1);
  }
  return send();
}

function operate(query: string, input: Record<string, unknown>): Promise<GraphQLAnswer> {
  return graphql(stack.app.url, { apiKey: TENANT_A.apiKey, query, variables: { input } });
}

/** A payment authorised (MANUAL) or captured, made normally. */
async function paid(reference: string, captureMethod: 'AUTOMATIC' | 'MANUAL') {
  const answer = await createPaymentOn(stack, paymentInput(reference, { captureMethod }));
  return paymentOf(answer);
}

const appliedOperations = (chargeId: string, kind: string) =>
  stack.sandbox.operations({ chargeId }).filter((o) => o.kind === kind && o.applied);

describe.each<Resumer>(['a client retry', 'the recovery worker'])(
  'a late resume by %s asks the provider first',
  (by) => {
    const tag = by === 'a client retry' ? 'retry' : 'worker';

    it('createPayment: one charge', async () => {
      const reference = `late-create-${tag}`;
      const send = () => createPaymentOn(stack, paymentInput(reference, { amount: '11.00' }));
      await dyingAfterTheCall('createPayment.provider_charge.after-call', send);
      const answer = await resume(by, send);
      expect(paymentOf(answer).status).toBe('SUCCEEDED');
      expect(stack.sandbox.charges({ reference })).toHaveLength(1);
      expect(stack.sandbox.attempts({ reference })).toBe(1);
      expect(paymentOf(answer).providerReference).toBe(stack.sandbox.charges({ reference })[0]?.id);
    });

    it('capturePayment: captured once, answered SUCCEEDED', async () => {
      const payment = await paid(`late-capture-${tag}`, 'MANUAL');
      const input = { idempotencyKey: `late-capture-${tag}-cap`, paymentId: payment.id };
      const send = () => operate(CAPTURE_PAYMENT, input);
      await dyingAfterTheCall('capturePayment.provider_call.after-call', send);
      const answer = await resume(by, send);
      expect(answer.body.errors).toBeUndefined();
      expect(answer.body.data?.['capturePayment']).toMatchObject({
        payment: { status: 'SUCCEEDED', amountCaptured: '10.00' },
      });
      expect(appliedOperations(payment.providerReference!, 'capture')).toHaveLength(1);
      expect(stack.sandbox.operations({ chargeId: payment.providerReference! })).toHaveLength(1);
    });

    it('refundPayment: refunded once', async () => {
      const payment = await paid(`late-refund-${tag}`, 'AUTOMATIC');
      const input = {
        idempotencyKey: `late-refund-${tag}-ref`,
        paymentId: payment.id,
        amount: '2.50',
      };
      const send = () => operate(REFUND_PAYMENT, input);
      await dyingAfterTheCall('refundPayment.provider_call.after-call', send);
      const answer = await resume(by, send);
      expect(answer.body.errors).toBeUndefined();
      expect(answer.body.data?.['refundPayment']).toMatchObject({
        refund: { amount: '2.50', status: 'SUCCEEDED' },
        payment: { amountRefunded: '2.50' },
      });
      expect(stack.sandbox.refunds({ chargeId: payment.providerReference! })).toHaveLength(1);
    });

    it('cancelPayment: voided once, answered CANCELED', async () => {
      const payment = await paid(`late-cancel-${tag}`, 'MANUAL');
      const input = { idempotencyKey: `late-cancel-${tag}-void`, paymentId: payment.id };
      const send = () => operate(CANCEL_PAYMENT, input);
      await dyingAfterTheCall('cancelPayment.provider_call.after-call', send);
      const answer = await resume(by, send);
      expect(answer.body.errors).toBeUndefined();
      expect(answer.body.data?.['cancelPayment']).toMatchObject({
        payment: { status: 'CANCELED' },
      });
      expect(stack.sandbox.operations({ chargeId: payment.providerReference! })).toHaveLength(1);
    });
  },
);

describe('a resume that finds nothing at the provider', () => {
  it('sends under the same key once the provider says it has none', async () => {
    const reference = 'late-never-sent';
    const send = () => createPaymentOn(stack, paymentInput(reference, { amount: '4.00' }));
    // The owner dies before its call: nothing reached the provider.
    await dyingAfterTheCall('createPayment.provider_charge.before-call', send);
    expect(stack.sandbox.attempts({ reference })).toBe(0);
    const answer = await resume('a client retry', send);
    expect(paymentOf(answer).status).toBe('SUCCEEDED');
    expect(stack.sandbox.charges({ reference })).toHaveLength(1);
  });
});
