import { describe, expect, it } from 'vitest';
import { graphql, type GraphQLAnswer } from '../support/graphql-client.ts';
import { paymentInput, TENANT_A, useTestStack } from '../support/test-stack.ts';

/**
 * Every answer about a payment says which state of it it shows (ADR 0041): `version` rises with
 * each change the API shows, `updatedAt` never goes back, a replay shows the version stored with
 * its key, and what the merchant sent (`description`, `metadata`) reads back as sent.
 */
const stack = useTestStack('payment-versions');

// Its own documents: the fields under test, whole, in every answer (a replay compared whole).
const PAYMENT = `id status amountCaptured amountRefunded createdAt refunds { id status }
  description metadata version updatedAt`;
const CREATE = `mutation C($input: CreatePaymentInput!) {
  createPayment(input: $input) { payment { ${PAYMENT} } idempotency { replayed } } }`;
const CAPTURE = `mutation Cap($input: CapturePaymentInput!) {
  capturePayment(input: $input) { payment { ${PAYMENT} } idempotency { replayed } } }`;
const CANCEL = `mutation Can($input: CancelPaymentInput!) {
  cancelPayment(input: $input) { payment { ${PAYMENT} } idempotency { replayed } } }`;
const REFUND = `mutation R($input: RefundPaymentInput!) {
  refundPayment(input: $input) { payment { ${PAYMENT} } idempotency { replayed } } }`;
const READ = `query P($id: ID!) { payment(id: $id) { ${PAYMENT} } }`;
const LIST = `query L($reference: String) {
  payments(reference: $reference) { edges { node { ${PAYMENT} } } } }`;

interface Payment {
  id: string;
  status: string;
  createdAt: string;
  refunds: Array<{ id: string; status: string }>;
  description: string | null;
  metadata: unknown;
  version: number;
  updatedAt: string;
}

function data(answer: GraphQLAnswer, field: string): Record<string, unknown> {
  const value = answer.body.data?.[field];
  if (value === undefined || value === null) {
    throw new Error(`no ${field}: ${JSON.stringify(answer.body)}\n${stack.errors.join('\n')}`);
  }
  return value as Record<string, unknown>;
}

async function send(query: string, input: Record<string, unknown>) {
  const answer = await graphql(stack.app.url, {
    apiKey: TENANT_A.apiKey,
    query,
    variables: { input },
  });
  return answer;
}

const paymentOf = (answer: GraphQLAnswer, field: string) =>
  data(answer, field)['payment'] as Payment;

async function read(id: string): Promise<Payment> {
  const answer = await graphql(stack.app.url, {
    apiKey: TENANT_A.apiKey,
    query: READ,
    variables: { id },
  });
  return data(answer, 'payment') as unknown as Payment;
}

/** Each state after the one before: a higher version, and an updatedAt not earlier. */
function expectNewer(later: Payment, earlier: Payment): void {
  expect(later.version).toBeGreaterThan(earlier.version);
  expect(Date.parse(later.updatedAt)).toBeGreaterThanOrEqual(Date.parse(earlier.updatedAt));
}

describe('description and metadata', () => {
  // Keys in an order jsonb does not keep: what is promised is the same object, not its order.
  const metadata = { zeta: 'last', a: { y: 2, b: [1, 'x', null] }, order: 'ord-77', ok: true };

  it('read back as sent: in the answer, its replay, payment(id) and the list', async () => {
    const input = paymentInput('meta-1', { description: 'a blue teapot', metadata });
    const created = await send(CREATE, input);
    const first = paymentOf(created, 'createPayment');
    expect(first).toMatchObject({ description: 'a blue teapot', metadata });

    const replay = await send(CREATE, input);
    expect(data(replay, 'createPayment')).toEqual({
      payment: first,
      idempotency: { replayed: true },
    });
    expect(await read(first.id)).toEqual(first);
    const list = data(
      await graphql(stack.app.url, {
        apiKey: TENANT_A.apiKey,
        query: LIST,
        variables: { reference: 'meta-1' },
      }),
      'payments',
    ) as { edges: Array<{ node: Payment }> };
    expect(list.edges.map((edge) => edge.node)).toEqual([first]);
  });

  it('are null when not sent', async () => {
    const created = paymentOf(await send(CREATE, paymentInput('meta-none')), 'createPayment');
    expect(created).toMatchObject({ description: null, metadata: null });
    expect(await read(created.id)).toMatchObject({ description: null, metadata: null });
  });
});

describe('version and updatedAt', () => {
  it('rise with each change, and the answer of each change is the state the payment was left in', async () => {
    const input = paymentInput('ver-1', { captureMethod: 'MANUAL' });
    const created = paymentOf(await send(CREATE, input), 'createPayment');
    expect(created).toMatchObject({ status: 'REQUIRES_CAPTURE', version: 2 });
    expect(Date.parse(created.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.createdAt));
    expect(await read(created.id)).toEqual(created);

    const capture = { idempotencyKey: 'ver-1-cap', paymentId: created.id };
    const captured = paymentOf(await send(CAPTURE, capture), 'capturePayment');
    expect(captured.status).toBe('SUCCEEDED');
    expectNewer(captured, created);
    expect(await read(created.id)).toEqual(captured);

    // A replay is the state stored with its key, and says so by its version.
    const replayed = paymentOf(await send(CREATE, input), 'createPayment');
    expect(replayed).toEqual(created);
    expect(replayed.version).toBeLessThan((await read(created.id)).version);
    expect(paymentOf(await send(CAPTURE, capture), 'capturePayment')).toEqual(captured);
  });

  it('a refund is a change when it is made, and again when it succeeds', async () => {
    const created = paymentOf(await send(CREATE, paymentInput('ver-ref')), 'createPayment');
    let inFlight: Payment | undefined;
    stack.app.faults.arm('refundPayment.provider_call.before-call', {
      kind: 'call',
      run: async () => {
        inFlight = await read(created.id);
      },
    });
    let refunded: Payment;
    try {
      const refund = { idempotencyKey: 'ver-ref-1', paymentId: created.id, amount: '4.00' };
      refunded = paymentOf(await send(REFUND, refund), 'refundPayment');
    } finally {
      stack.app.faults.disarm('refundPayment.provider_call.before-call');
    }
    expect(inFlight?.refunds).toEqual([{ id: refunded.refunds[0]!.id, status: 'PROCESSING' }]);
    expectNewer(inFlight!, created);
    expect(refunded.refunds).toEqual([{ id: refunded.refunds[0]!.id, status: 'SUCCEEDED' }]);
    expectNewer(refunded, inFlight!);
    expect(await read(created.id)).toEqual(refunded);
  });

  it('a refund the provider refuses is a change too: it shows FAILED', async () => {
    const created = paymentOf(await send(CREATE, paymentInput('ver-oob')), 'createPayment');
    const { rows } = await stack.db.query<{ provider_reference: string }>(
      `SELECT provider_reference FROM payments WHERE id = $1`,
      [created.id],
    );
    // Out of band: all of it refunded at the provider directly, so the provider refuses ours.
    const oob = await fetch(
      new URL(`/v1/charges/${rows[0]!.provider_reference}/refunds`, stack.sandbox.url),
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'ver-oob-direct' },
        body: JSON.stringify({ amount: '10.00' }),
      },
    );
    expect(oob.status).toBeLessThan(300);
    const refused = await send(REFUND, {
      idempotencyKey: 'ver-oob-1',
      paymentId: created.id,
      amount: '1.00',
    });
    expect(refused.body.errors?.[0]?.extensions?.['code']).toBe('AMOUNT_EXCEEDS_REFUNDABLE');
    const after = await read(created.id);
    expect(after.refunds.map((refund) => refund.status)).toEqual(['FAILED']);
    expectNewer(after, created);
  });

  it('a cancel is a change', async () => {
    const input = paymentInput('ver-cancel', { captureMethod: 'MANUAL' });
    const created = paymentOf(await send(CREATE, input), 'createPayment');
    const cancel = { idempotencyKey: 'ver-cancel-1', paymentId: created.id };
    const canceled = paymentOf(await send(CANCEL, cancel), 'cancelPayment');
    expect(canceled.status).toBe('CANCELED');
    expectNewer(canceled, created);
  });

  it("the event a change writes carries the same state: webhooks and the ledger's freshness read it", async () => {
    const input = paymentInput('ver-event', { captureMethod: 'MANUAL' });
    const created = paymentOf(await send(CREATE, input), 'createPayment');
    const capture = { idempotencyKey: 'ver-event-cap', paymentId: created.id };
    const captured = paymentOf(await send(CAPTURE, capture), 'capturePayment');
    const { rows } = await stack.db.query<{ type: string; payment: Payment }>(
      `SELECT type, payload -> 'payment' AS payment FROM outbox_events
        WHERE payload #>> '{payment,id}' = $1 ORDER BY log_seq`,
      [created.id],
    );
    expect(rows.map((row) => [row.type, row.payment.version, row.payment.updatedAt])).toEqual([
      ['payment.authorized', created.version, created.updatedAt],
      ['payment.captured', captured.version, captured.updatedAt],
    ]);
  });
});
