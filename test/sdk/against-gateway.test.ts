/**
 * The SDK against the real gateway (a test stack on its own cloned database): every method,
 * the gateway's real refusals and whether they are retried, the attempt number in the gateway's
 * request line, and a call resumed after a restart with its key from the file store.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFileKeyStore } from '../../packages/client/src/file-key-store.ts';
import {
  createPaymentsClient,
  PaymentsApiError,
  type FetchLike,
  type PaymentsClientOptions,
} from '../../packages/client/src/index.ts';
import { drainOutbox } from '../support/event-log.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { startTestStack, TENANT_A, TENANT_B, type TestStack } from '../support/test-stack.ts';

const database = useTestDatabase('sdk_against_gateway');
let stack: TestStack;
let keysDirectory: string;
const logLines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  keysDirectory = await mkdtemp(join(tmpdir(), 'pgw-sdk-gateway-keys-'));
  stack = await startTestStack({
    databaseUrl: database.url,
    app: {
      logLevel: 'info',
      logDestination: {
        write(line: string) {
          logLines.push(JSON.parse(line) as Record<string, unknown>);
        },
      },
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  if (keysDirectory !== undefined) await rm(keysDirectory, { recursive: true, force: true });
});

function client(options: Partial<PaymentsClientOptions> = {}) {
  return createPaymentsClient({
    url: `${stack.app.url}/graphql`,
    apiKey: TENANT_A.apiKey,
    backoff: { baseMs: 10, capMs: 100 },
    ...options,
  });
}

/** The platform's fetch, except that the answers of the first `lose` requests never arrive. */
function losingFirstAnswers(lose: number): FetchLike {
  let sent = 0;
  return async (url, init) => {
    const response = await fetch(url, init);
    sent += 1;
    if (sent > lose) return response;
    await response.text(); // the gateway has answered: its work is done, the answer is lost
    throw new TypeError('fetch failed');
  };
}

async function failureOf(call: Promise<unknown>): Promise<PaymentsApiError> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof PaymentsApiError))
    throw new Error(`expected a PaymentsApiError: ${String(error)}`);
  return error;
}

async function chargesFor(reference: string): Promise<unknown[]> {
  const response = await fetch(`${stack.sandbox.url}/v1/charges?reference=${reference}`);
  return ((await response.json()) as { data: unknown[] }).data;
}

describe('every method of the SDK against the gateway', () => {
  it('authorises, captures, refunds, cancels, registers, lists and reads balances', async () => {
    const sdk = client();
    const created = await sdk.createPayment({
      amount: '40.00',
      currency: 'EUR',
      paymentMethod: 'pm_card_visa',
      captureMethod: 'MANUAL',
      reference: 'sdk-methods-1',
    });
    expect(created.payment).toMatchObject({ status: 'REQUIRES_CAPTURE', amount: '40.00' });
    expect(created.idempotency.replayed).toBe(false);
    const paymentId = created.payment.id;
    const captured = await sdk.capturePayment({ paymentId, amount: '30.00' });
    expect(captured.payment).toMatchObject({ status: 'SUCCEEDED', amountCaptured: '30.00' });
    const refunded = await sdk.refundPayment({ paymentId, amount: '5.00', reason: 'returned' });
    expect(refunded.refund).toMatchObject({ paymentId, amount: '5.00', reason: 'returned' });
    expect(refunded.payment.amountRefunded).toBe('5.00');

    const other = await sdk.createPayment({
      amount: '3.00',
      currency: 'EUR',
      paymentMethod: 'pm_card_visa',
      captureMethod: 'MANUAL',
      reference: 'sdk-methods-2',
    });
    const canceled = await sdk.cancelPayment({ paymentId: other.payment.id });
    expect(canceled.payment.status).toBe('CANCELED');

    expect((await sdk.payment(paymentId))?.refunds).toHaveLength(1);
    expect(await client({ apiKey: TENANT_B.apiKey }).payment(paymentId)).toBeNull();
    const page = await sdk.payments({ reference: 'sdk-methods-1', first: 5 });
    expect(page.edges.map((edge) => edge.node.id)).toEqual([paymentId]);
    // The ledger posts from the outbox, after the answers: drained here, as the worker would.
    await drainOutbox(stack.db, [stack.app.services.dispatcher]);
    expect(await sdk.balances()).toContainEqual({
      currency: 'EUR',
      available: '25.00',
      pending: '0.00',
      asOf: expect.any(String) as unknown,
    });

    const endpoint = await sdk.registerWebhookEndpoint({ url: 'http://127.0.0.1:9/hooks' });
    expect(endpoint.endpoint.secret).toMatch(/^whsec_/);

    const custom = await sdk.request<{ payment: { id: string; status: string } | null }>(
      parse('query One($id: ID!) { payment(id: $id) { id status } }'),
      { id: paymentId },
    );
    expect(custom.payment).toEqual({ id: paymentId, status: 'SUCCEEDED' });
    const asText = await sdk.request<{ balances: unknown[] }>('{ balances { currency } }');
    expect(asText.balances).toContainEqual({ currency: 'EUR' });
  });

  it('answers a second call with the same key with the stored result', async () => {
    const sdk = client();
    const input = { amount: '7.00', currency: 'EUR', paymentMethod: 'pm_card_visa' };
    const first = await sdk.createPayment(input, { idempotencyKey: 'sdk-same-key' });
    const again = await sdk.createPayment(input, { idempotencyKey: 'sdk-same-key' });
    expect(again.payment.id).toBe(first.payment.id);
    expect(again.idempotency.replayed).toBe(true);
  });
});

describe('a decline is a result, not an error', () => {
  it('createPayment returns the payment FAILED with its failureCode, sent once', async () => {
    const outcomes: string[] = [];
    const sdk = client({ onAttempt: (report) => outcomes.push(report.outcome) });
    const { payment, idempotency } = await sdk.createPayment({
      amount: '8.00',
      currency: 'EUR',
      paymentMethod: 'pm_card_declined',
      reference: 'sdk-declined-1',
    });
    expect(payment).toMatchObject({ status: 'FAILED', failureCode: 'CARD_DECLINED' });
    expect(outcomes).toEqual(['succeeded']);
    // Binding for the key: the same call again replays the decline; the card is not tried again.
    const again = await sdk.createPayment(
      {
        amount: '8.00',
        currency: 'EUR',
        paymentMethod: 'pm_card_declined',
        reference: 'sdk-declined-1',
      },
      { idempotencyKey: idempotency.key },
    );
    expect(again.payment).toMatchObject({ id: payment.id, status: 'FAILED' });
    expect(again.idempotency.replayed).toBe(true);
    expect(await chargesFor('sdk-declined-1')).toHaveLength(1);
    const failed = await sdk.payments({ status: 'FAILED', reference: 'sdk-declined-1' });
    expect(failed.edges.map((edge) => edge.node.id)).toEqual([payment.id]);
    expect(
      (await sdk.payments({ status: 'SUCCEEDED', reference: 'sdk-declined-1' })).edges,
    ).toEqual([]);
    const created = Date.parse(payment.createdAt);
    const window = {
      createdAfter: new Date(created - 1_000).toISOString(),
      createdBefore: new Date(created + 1_000).toISOString(),
    };
    expect((await sdk.payments({ ...window, reference: 'sdk-declined-1' })).edges).toHaveLength(1);
  });
});

describe('OUTCOME_PENDING', () => {
  it('is thrown once the attempts run out: retryable, with the key and the payment; the same call resumes it', async () => {
    const sdk = client({ maxAttempts: 1 });
    const input = {
      amount: '6.00',
      currency: 'EUR',
      paymentMethod: 'pm_card_unreachable',
      reference: 'sdk-pending-1',
    };
    const pending = await failureOf(sdk.createPayment(input));
    expect(pending).toMatchObject({
      code: 'OUTCOME_PENDING',
      httpStatus: 202,
      retryable: true,
      attempts: 1,
    });
    expect(pending.paymentId).toEqual(expect.any(String));
    expect(pending.idempotencyKey).toEqual(expect.any(String));
    expect(await sdk.payment(pending.paymentId!)).toMatchObject({ status: 'PROCESSING' });
    // The same key again: the same payment, still pending; never a second one.
    const again = await failureOf(
      sdk.createPayment(input, { idempotencyKey: pending.idempotencyKey! }),
    );
    expect(again).toMatchObject({ code: 'OUTCOME_PENDING', paymentId: pending.paymentId });
    expect((await sdk.payments({ reference: 'sdk-pending-1' })).edges).toHaveLength(1);
  });
});

describe("the gateway's refusals", () => {
  const input = { amount: '9.00', currency: 'EUR', paymentMethod: 'pm_card_visa' };

  it.each([
    [
      'PAYMENT_NOT_FOUND',
      404,
      () => client().capturePayment({ paymentId: '00000000-0000-0000-0000-000000000000' }),
    ],
    ['BAD_USER_INPUT', 400, () => client().createPayment({ ...input, currency: 'XXX' })],
    ['UNAUTHENTICATED', 401, () => client({ apiKey: 'sk_test_nobody_000000000000' }).balances()],
    [
      'WEBHOOK_URL_NOT_ALLOWED',
      400,
      () => client().registerWebhookEndpoint({ url: 'https://10.0.0.1/hooks' }),
    ],
  ])('%s (HTTP %d) is final: sent once', async (code, httpStatus, call) => {
    const error = await failureOf(call());
    expect(error).toMatchObject({ code, httpStatus, retryable: false, attempts: 1 });
  });

  it('IDEMPOTENCY_KEY_REUSED is final: the key names another request', async () => {
    const sdk = client();
    await sdk.createPayment(input, { idempotencyKey: 'sdk-reused' });
    const error = await failureOf(
      sdk.createPayment({ ...input, amount: '9.01' }, { idempotencyKey: 'sdk-reused' }),
    );
    expect(error).toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
      httpStatus: 422,
      retryable: false,
      attempts: 1,
      idempotencyKey: 'sdk-reused',
    });
  });

  it('INVALID_PAYMENT_STATE and AMOUNT_EXCEEDS_CAPTURABLE are final', async () => {
    const sdk = client();
    const { payment } = await sdk.createPayment({ ...input, captureMethod: 'MANUAL' });
    const tooMuch = await failureOf(sdk.capturePayment({ paymentId: payment.id, amount: '9.50' }));
    expect(tooMuch).toMatchObject({ code: 'AMOUNT_EXCEEDS_CAPTURABLE', attempts: 1 });
    await sdk.capturePayment({ paymentId: payment.id });
    const twice = await failureOf(sdk.capturePayment({ paymentId: payment.id }));
    expect(twice).toMatchObject({ code: 'INVALID_PAYMENT_STATE', attempts: 1, retryable: false });
  });
});

describe('a lost answer', () => {
  it('is retried with the same key, and the gateway logs each attempt under its number', async () => {
    const requestIds: string[] = [];
    const sdk = client({
      fetch: losingFirstAnswers(1),
      onAttempt: (report) => requestIds.push(report.requestId),
    });
    const answer = await sdk.createPayment({
      amount: '11.00',
      currency: 'EUR',
      paymentMethod: 'pm_card_visa',
      reference: 'sdk-lost-1',
    });
    expect(answer.idempotency.replayed).toBe(true);
    expect(await chargesFor('sdk-lost-1')).toHaveLength(1);
    expect(requestIds).toHaveLength(2);
    const lineOf = (requestId: string | undefined) =>
      logLines.find((line) => line['requestId'] === requestId && line['msg'] === 'request');
    expect(lineOf(requestIds[0])).toMatchObject({
      idempotencyAttempt: 1,
      admissions: [expect.objectContaining({ outcome: 'executed' })],
    });
    expect(lineOf(requestIds[1])).toMatchObject({
      idempotencyAttempt: 2,
      admissions: [expect.objectContaining({ outcome: 'replayed' })],
    });
  });

  it('resumes after a restart with the key the file store kept: one charge', async () => {
    const before = client({
      fetch: losingFirstAnswers(Number.POSITIVE_INFINITY),
      keyStore: createFileKeyStore({ directory: keysDirectory }),
      maxAttempts: 2,
    });
    const input = {
      amount: '15.00',
      currency: 'EUR',
      paymentMethod: 'pm_card_visa',
      reference: 'sdk-restart-1',
    };
    const lost = await failureOf(before.createPayment(input, { operationId: 'checkout-1' }));
    expect(lost).toMatchObject({ code: 'NETWORK_ERROR', retryable: true, attempts: 2 });
    expect(await readdir(keysDirectory)).toHaveLength(1);

    // The process restarts: a new client, a new store object, the same directory.
    const after = client({ keyStore: createFileKeyStore({ directory: keysDirectory }) });
    const resumed = await after.createPayment(input, { operationId: 'checkout-1' });
    expect(resumed.idempotency).toMatchObject({ key: lost.idempotencyKey, replayed: true });
    expect(await chargesFor('sdk-restart-1')).toHaveLength(1);
    const { rows } = await stack.db.query<{ id: string }>(
      `SELECT id FROM payments WHERE reference = 'sdk-restart-1'`,
    );
    expect(rows).toEqual([{ id: resumed.payment.id }]);
    expect(await readdir(keysDirectory)).toEqual([]);
  });
});
