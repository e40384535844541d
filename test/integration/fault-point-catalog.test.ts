import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAULT_POINT_CATALOG } from '../../app/fault-point-catalog.ts';
import { FaultPoints } from '../../lib/faults.ts';
import { graphql, paymentOf } from '../support/graphql-client.ts';
import { createPaymentOn, paymentInput, TENANT_A, useTestStack } from '../support/test-stack.ts';

/** Fault points that remember every point the process passes, armed or not. */
class PassedPoints extends FaultPoints {
  readonly passed = new Set<string>();
  override hit(name: string): Promise<void> {
    this.passed.add(name);
    return super.hit(name);
  }
}

const points = new PassedPoints();
let sink: Server;

beforeAll(async () => {
  sink = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await new Promise((resolve) => sink?.close(resolve));
});
// After the sink: stopped before it is closed.
const stack = useTestStack('fault_point_catalog', {
  app: { faults: points, startRecoveryWorker: true, outboxIntervalMs: 20 },
});

const mutate = (name: string, type: string, input: Record<string, unknown>) =>
  graphql(stack.app.url, {
    apiKey: TENANT_A.apiKey,
    query: `mutation($input: ${type}!) { ${name}(input: $input) { payment { id status } } }`,
    variables: { input },
  });

describe('the fault point catalog', () => {
  it('names every point a payment lifecycle passes, so FAULT_POINTS can arm each one', async () => {
    const { port } = sink.address() as AddressInfo;
    await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: `mutation($input: RegisterWebhookEndpointInput!) { registerWebhookEndpoint(input: $input) { endpoint { id } } }`,
      variables: { input: { idempotencyKey: 'fp-hook', url: `http://127.0.0.1:${port}/hook` } },
    });
    const manual = paymentInput('fp-1', { captureMethod: 'MANUAL' });
    const captured = paymentOf(await createPaymentOn(stack, manual));
    await mutate('capturePayment', 'CapturePaymentInput', {
      idempotencyKey: 'fp-capture',
      paymentId: captured.id,
    });
    await mutate('refundPayment', 'RefundPaymentInput', {
      idempotencyKey: 'fp-refund',
      paymentId: captured.id,
      amount: '1.00',
    });
    const voided = paymentOf(
      await createPaymentOn(stack, paymentInput('fp-2', { captureMethod: 'MANUAL' })),
    );
    await mutate('cancelPayment', 'CancelPaymentInput', {
      idempotencyKey: 'fp-cancel',
      paymentId: voided.id,
    });
    // Every consumer kind of the outbox has handled something: the webhook too.
    await expect
      .poll(() => [...points.passed].filter((name) => name.startsWith('outbox.')).sort(), {
        timeout: 20_000,
      })
      .toEqual([
        'outbox.ledger.after-handle',
        'outbox.receipts.after-handle',
        'outbox.webhook.after-handle',
        'outbox.webhooks.after-handle',
      ]);
    const missing = [...points.passed].filter((name) => !FAULT_POINT_CATALOG.has(name));
    expect(missing).toEqual([]);
    // And the catalog names nothing the code never passes.
    const unreached = [...FAULT_POINT_CATALOG].filter((name) => !points.passed.has(name));
    expect(unreached).toEqual([]);
  });
});
