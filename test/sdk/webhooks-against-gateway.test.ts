/**
 * The SDK's webhook methods against the real gateway (a test stack on its own cloned database),
 * and verifyWebhook on the deliveries it actually sends: list, update, rotate, page through
 * deliveries, redeliver, delete, each mutation once per key, each refusal final and sent once.
 * test/integration/webhook-endpoint-management.test.ts covers the gateway's side in depth.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPaymentsClient,
  PaymentsApiError,
  type PaymentsClientOptions,
} from '../../packages/client/src/index.ts';
import { verifyWebhook, WebhookVerificationError } from '../../packages/client/src/webhooks.ts';
import { drainOutbox } from '../support/event-log.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { startTestStack, TENANT_B, type TestStack } from '../support/test-stack.ts';

/** A delivery as the merchant's server received it: the raw body and the headers. */
interface Received {
  body: string;
  headers: IncomingHttpHeaders;
}

const database = useTestDatabase('sdk_webhooks');
const received: Received[] = [];
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    received.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
    res.writeHead(200).end();
  });
});
let stack: TestStack;
let hooksUrl: string;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hooksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  stack = await startTestStack({ databaseUrl: database.url });
});
afterAll(async () => {
  await stack?.stop();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function client(options: Partial<PaymentsClientOptions> = {}) {
  return createPaymentsClient({
    url: `${stack.app.url}/graphql`,
    apiKey: 'sk_test_tenant_a_0000000000000000',
    backoff: { baseMs: 10, capMs: 100 },
    ...options,
  });
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

let payments = 0;
/** A payment made through the SDK, its events delivered: what the receiver got for it. */
async function pay(): Promise<{ paymentId: string; deliveries: Received[] }> {
  payments += 1;
  const before = received.length;
  const { payment } = await client().createPayment({
    amount: '12.00',
    currency: 'EUR',
    paymentMethod: 'pm_card_visa',
    reference: `sdk-hooked-${payments}`,
  });
  await drainOutbox(stack.db, [stack.app.services.dispatcher]);
  return { paymentId: payment.id, deliveries: received.slice(before) };
}

/** verifyWebhook on a delivery as received, or the code of its refusal. */
function verified(delivery: Received | undefined, secret: string | string[]) {
  if (delivery === undefined) throw new Error('no delivery');
  try {
    return verifyWebhook(delivery.body, delivery.headers, secret);
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.code;
    throw error;
  }
}

describe('webhook endpoints through the SDK', () => {
  const sdk = () => client();
  let endpointId: string;
  let secret: string;

  it('registers an endpoint and lists it without its secret; another tenant sees none', async () => {
    const registered = await sdk().registerWebhookEndpoint({ url: hooksUrl });
    ({ id: endpointId, secret } = registered.endpoint);
    expect(secret).toMatch(/^whsec_/);
    const listed = await sdk().webhookEndpoints();
    expect(listed).toEqual([
      {
        id: endpointId,
        url: hooksUrl,
        status: 'enabled',
        disabledReason: null,
        eventTypes: null,
        createdAt: expect.any(String) as string,
        updatedAt: expect.any(String) as string,
      },
    ]);
    expect(JSON.stringify(listed)).not.toContain(secret);
    expect(await client({ apiKey: TENANT_B.apiKey }).webhookEndpoints()).toEqual([]);
  });

  it('delivers what verifyWebhook accepts with the registered secret, exactly as received', async () => {
    const { paymentId, deliveries } = await pay();
    expect(deliveries).toHaveLength(1);
    const event = verified(deliveries[0], secret);
    expect(event).toMatchObject({
      id: deliveries[0]!.headers['webhook-id'],
      type: 'payment.succeeded',
      data: { payment: { id: paymentId, status: 'SUCCEEDED', amount: '12.00' } },
    });
    const another = `whsec_${randomBytes(24).toString('base64')}`;
    expect(verified(deliveries[0], another)).toBe('INVALID_SIGNATURE');
  });

  it('updates an endpoint once per key: disabled, filtered, enabled', async () => {
    const disabled = await sdk().updateWebhookEndpoint(
      { endpointId, enabled: false },
      { idempotencyKey: 'sdk-disable-1' },
    );
    expect(disabled.endpoint).toMatchObject({
      id: endpointId,
      status: 'disabled',
      disabledReason: 'disabled by the merchant',
    });
    expect(disabled.idempotency).toMatchObject({ key: 'sdk-disable-1', replayed: false });
    const again = await sdk().updateWebhookEndpoint(
      { endpointId, enabled: false },
      { idempotencyKey: 'sdk-disable-1' },
    );
    expect(again).toEqual({
      ...disabled,
      idempotency: { ...disabled.idempotency, replayed: true },
    });
    expect((await pay()).deliveries).toEqual([]);

    const filtered = await sdk().updateWebhookEndpoint({
      endpointId,
      enabled: true,
      eventTypes: ['refund.succeeded'],
    });
    expect(filtered.endpoint).toMatchObject({
      status: 'enabled',
      eventTypes: ['refund.succeeded'],
    });
    expect((await pay()).deliveries).toEqual([]);
    // null receives every type again (absent would leave the filter as it is).
    const everything = await sdk().updateWebhookEndpoint({ endpointId, eventTypes: null });
    expect(everything.endpoint.eventTypes).toBeNull();
    expect((await pay()).deliveries).toHaveLength(1);
  });

  it('rotates the secret: both verify during the overlap, only the new one after', async () => {
    const rotated = await sdk().rotateWebhookSecret({ endpointId, overlapSeconds: 3_600 });
    const next = rotated.endpoint.secret;
    expect(next).toMatch(/^whsec_/);
    expect(next).not.toBe(secret);
    expect(Date.parse(rotated.previousSecretExpiresAt)).toBeGreaterThan(Date.now() + 3_000_000);

    const [during] = (await pay()).deliveries;
    expect(String(during?.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verified(during, next)).toMatchObject({ type: 'payment.succeeded' });
    expect(verified(during, secret)).toMatchObject({ type: 'payment.succeeded' });

    const abrupt = await sdk().rotateWebhookSecret({ endpointId, overlapSeconds: 0 });
    const [afterwards] = (await pay()).deliveries;
    expect(verified(afterwards, next)).toBe('INVALID_SIGNATURE');
    expect(verified(afterwards, [next, abrupt.endpoint.secret])).toMatchObject({
      type: 'payment.succeeded',
    });
    secret = abrupt.endpoint.secret;
  });

  it('pages through deliveries and redelivers one under the same webhook-id', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 20; page++) {
      const connection = await sdk().webhookDeliveries({ endpointId, first: 2, after });
      expect(connection.edges.length).toBeLessThanOrEqual(2);
      seen.push(...connection.edges.map((edge) => edge.node.eventId));
      if (!connection.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;
    }
    expect(new Set(seen)).toEqual(new Set(received.map((r) => String(r.headers['webhook-id']))));
    expect(
      await sdk().webhookDeliveries({ endpointId: '00000000-0000-0000-0000-000000000000' }),
    ).toEqual({ edges: [], pageInfo: { hasNextPage: false, endCursor: null } });

    const eventId = seen[0]!;
    const before = received.length;
    const redelivered = await sdk().redeliverWebhookEvent({ endpointId, eventId });
    expect(redelivered.delivery).toMatchObject({ eventId, status: 'pending', attempts: 0 });
    await drainOutbox(stack.db, [stack.app.services.dispatcher]);
    const [again] = received.slice(before);
    expect(again?.headers['webhook-id']).toBe(eventId);
    // Signed afresh, now, under today's secret.
    expect(verified(again, secret)).toMatchObject({ id: eventId });
  });

  it('sends one signed test event per key, to that endpoint only', async () => {
    const before = received.length;
    const idempotencyKey = `test-event-${randomBytes(6).toString('hex')}`;
    const sent = await sdk().sendTestWebhookEvent({ endpointId }, { idempotencyKey });
    expect(sent.delivery).toMatchObject({ eventType: 'webhook_endpoint.test', status: 'pending' });
    const again = await sdk().sendTestWebhookEvent({ endpointId }, { idempotencyKey });
    expect(again.idempotency.replayed).toBe(true);
    expect(again.delivery.eventId).toBe(sent.delivery.eventId);
    await drainOutbox(stack.db, [stack.app.services.dispatcher]);
    const arrived = received.slice(before);
    expect(arrived).toHaveLength(1);
    expect(verified(arrived[0], secret)).toMatchObject({
      id: sent.delivery.eventId,
      type: 'webhook_endpoint.test',
    });
  });

  it("refuses what cannot be done: final, sent once, the key's answer", async () => {
    const unknownEvent = await failureOf(
      sdk().redeliverWebhookEvent({ endpointId, eventId: 'evt_nope' }),
    );
    expect(unknownEvent).toMatchObject({
      code: 'WEBHOOK_DELIVERY_NOT_FOUND',
      httpStatus: 404,
      retryable: false,
      attempts: 1,
    });
    await sdk().updateWebhookEndpoint({ endpointId, enabled: false });
    const disabled = await failureOf(
      sdk().redeliverWebhookEvent({ endpointId, eventId: 'evt_any' }),
    );
    expect(disabled).toMatchObject({ code: 'WEBHOOK_ENDPOINT_DISABLED', attempts: 1 });
    const foreign = await failureOf(
      client({ apiKey: TENANT_B.apiKey }).rotateWebhookSecret({ endpointId }),
    );
    expect(foreign).toMatchObject({
      code: 'WEBHOOK_ENDPOINT_NOT_FOUND',
      httpStatus: 404,
      retryable: false,
      attempts: 1,
    });
  });

  it('deletes an endpoint once per key: gone from the list, nothing delivered', async () => {
    const deleted = await sdk().deleteWebhookEndpoint(
      { endpointId },
      { idempotencyKey: 'sdk-delete-1' },
    );
    expect(deleted).toMatchObject({
      deletedEndpointId: endpointId,
      idempotency: { replayed: false },
    });
    const replay = await sdk().deleteWebhookEndpoint(
      { endpointId },
      { idempotencyKey: 'sdk-delete-1' },
    );
    expect(replay.idempotency.replayed).toBe(true);
    expect(await sdk().webhookEndpoints()).toEqual([]);
    expect((await pay()).deliveries).toEqual([]);
    const gone = await failureOf(sdk().updateWebhookEndpoint({ endpointId, enabled: true }));
    expect(gone).toMatchObject({ code: 'WEBHOOK_ENDPOINT_NOT_FOUND', attempts: 1 });
  });
});
