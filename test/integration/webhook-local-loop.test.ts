import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.ts';
import { INSERT_ENDPOINT } from '../../services/notifications/notifications.sql.ts';
import { generateWebhookSecret } from '../../services/notifications/webhook-signature.ts';
import { drainOutbox } from '../support/event-log.ts';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.ts';
import { errorCodeOf, graphql, type GraphQLAnswer } from '../support/graphql-client.ts';
import { REGISTER_WEBHOOK_ENDPOINT } from '../support/operations.ts';
import { useTestDatabase } from '../support/test-database.ts';
import {
  createPaymentOn,
  paymentInput,
  TENANT_A,
  TENANT_B,
  useTestStackOn,
  type TestStack,
} from '../support/test-stack.ts';
import { useWebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * The local webhook loop (GitHub issue 35): a developer's receiver on 127.0.0.1, registered over
 * plain http on the port it listens on, receives signed events with nothing configured in
 * embedded mode, and a test event on demand (sendTestWebhookEvent). With DATABASE_URL the rules
 * stay production's: loopback is refused, at registration and at every delivery, and the refusal
 * names the setting that would allow it. Each allow-list comes from loadConfig, the path that
 * decides embedded mode: the stacks below get what `npm start` would run with.
 */
const receiver = useWebhookReceiver();
/** A second endpoint's receiver: a test event sent to the first must not reach it. */
const bystander = useWebhookReceiver();

const embeddedDatabase = useTestDatabase('webhook-local-loop');
/** `npm start` with nothing configured: no DATABASE_URL, so embedded mode. */
const embedded = useTestStackOn(embeddedDatabase, {
  app: { webhookAllowList: loadConfig({}).webhookAllowList },
});
const productionDatabase = useTestDatabase('webhook-local-loop-production');
/**
 * `npm start` on a server of one's own, WEBHOOK_ALLOWED_HOSTS unset. Only whether DATABASE_URL
 * is set decides the mode; the stack itself runs on its test database.
 */
const production = useTestStackOn(productionDatabase, {
  app: {
    webhookAllowList: loadConfig({ DATABASE_URL: 'postgresql://db.example/payments' })
      .webhookAllowList,
  },
});

const SEND_TEST = `mutation($input: SendTestWebhookEventInput!) {
  sendTestWebhookEvent(input: $input) {
    delivery { eventId eventType status attempts lastError } idempotency { key replayed } } }`;
const DELIVERIES = `query($endpointId: ID!) {
  webhookDeliveries(endpointId: $endpointId) { edges { node { eventId eventType status attempts lastError } } } }`;
const UPDATE = `mutation($input: UpdateWebhookEndpointInput!) {
  updateWebhookEndpoint(input: $input) { endpoint { status } } }`;

/** As tenant A. */
const gql = (stack: TestStack, query: string, variables: Record<string, unknown>) =>
  graphql(stack.app.url, { apiKey: TENANT_A.apiKey, query, variables });

function field<T>(answer: GraphQLAnswer, name: string): T {
  const value = answer.body.data?.[name];
  if (value === undefined || value === null)
    throw new Error(`no ${name} in ${JSON.stringify(answer.body)}`);
  return value as T;
}

async function register(
  stack: TestStack,
  key: string,
  url: string,
): Promise<{ id: string; secret: string }> {
  const answer = await gql(stack, REGISTER_WEBHOOK_ENDPOINT, {
    input: { idempotencyKey: key, url },
  });
  return field<{ endpoint: { id: string; secret: string } }>(answer, 'registerWebhookEndpoint')
    .endpoint;
}

const drain = (stack: TestStack) => drainOutbox(stack.db, [stack.app.services.dispatcher]);

async function testEventsWritten(stack: TestStack): Promise<number> {
  const { rows } = await stack.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE type = 'webhook_endpoint.test'`,
  );
  return rows[0]?.n ?? 0;
}

describe('embedded mode (no DATABASE_URL)', () => {
  it('registers a local http receiver on 127.0.0.1 and delivers to it, signed', async () => {
    expect(receiver.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks$/);
    const endpoint = await register(embedded, 'local-receiver', receiver.url);
    receiver.secret = endpoint.secret;
    const before = receiver.received.length;
    await createPaymentOn(embedded, paymentInput('local-loop-1'));
    await drain(embedded);
    expect(receiver.received.slice(before)).toEqual([
      {
        id: expect.stringMatching(/^evt_payment_/) as unknown,
        type: 'payment.succeeded',
        verified: true,
      },
    ]);
  });
});

describe('sendTestWebhookEvent', () => {
  it('delivers exactly one signed test event, to that endpoint only; a replay sends nothing', async () => {
    const [endpoint] = field<Array<{ id: string }>>(
      await gql(embedded, '{ webhookEndpoints { id } }', {}),
      'webhookEndpoints',
    );
    const other = await register(embedded, 'bystander', bystander.url);
    bystander.secret = other.secret;
    await drain(embedded);
    const before = receiver.received.length;
    const bystanderBefore = bystander.received.length;
    const eventsBefore = await testEventsWritten(embedded);

    const input = { idempotencyKey: 'test-event-1', endpointId: endpoint!.id };
    const sent = field<{ delivery: { eventId: string } }>(
      await gql(embedded, SEND_TEST, { input }),
      'sendTestWebhookEvent',
    );
    expect(sent).toMatchObject({
      delivery: {
        eventId: expect.stringMatching(/^evt_test_/) as unknown,
        eventType: 'webhook_endpoint.test',
        status: 'pending',
        attempts: 0,
        lastError: null,
      },
      idempotency: { key: 'test-event-1', replayed: false },
    });
    // The event id is ours, never derived from the client's key.
    expect(sent.delivery.eventId).not.toContain('test-event-1');
    await drain(embedded);
    expect(receiver.received.slice(before)).toEqual([
      { id: sent.delivery.eventId, type: 'webhook_endpoint.test', verified: true },
    ]);
    expect(bystander.received.slice(bystanderBefore)).toEqual([]);
    const listed = field<{ edges: Array<{ node: { eventId: string; status: string } }> }>(
      await gql(embedded, DELIVERIES, { endpointId: endpoint!.id }),
      'webhookDeliveries',
    );
    expect(listed.edges.map((e) => e.node)).toContainEqual({
      eventId: sent.delivery.eventId,
      eventType: 'webhook_endpoint.test',
      status: 'delivered',
      attempts: 1,
      lastError: null,
    });

    const replay = await gql(embedded, SEND_TEST, { input });
    expect(replay.body.data).toEqual({
      sendTestWebhookEvent: { ...sent, idempotency: { key: 'test-event-1', replayed: true } },
    });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    await drain(embedded);
    expect(receiver.received.length).toBe(before + 1);
    expect(await testEventsWritten(embedded)).toBe(eventsBefore + 1);
  });

  it.each([
    ['an unknown endpoint', () => randomUUID(), TENANT_A.apiKey],
    ['a malformed endpoint id', () => 'not-an-id', TENANT_A.apiKey],
    ["another tenant's endpoint", (tenantAs: string) => tenantAs, TENANT_B.apiKey],
  ])('refuses %s with WEBHOOK_ENDPOINT_NOT_FOUND, stored for the key', async (what, id, apiKey) => {
    const [tenantAs] = field<Array<{ id: string }>>(
      await gql(embedded, '{ webhookEndpoints { id } }', {}),
      'webhookEndpoints',
    );
    const endpointId = id(tenantAs!.id);
    const eventsBefore = await testEventsWritten(embedded);
    const input = { idempotencyKey: `test-refused-${what.replace(/\W/g, '')}`, endpointId };
    const send = () =>
      graphql(embedded.app.url, { apiKey, query: SEND_TEST, variables: { input } });
    const refused = await send();
    expect(errorCodeOf(refused)).toBe('WEBHOOK_ENDPOINT_NOT_FOUND');
    expect(refused.status).toBe(404);
    const replayed = await send();
    expect(errorCodeOf(replayed)).toBe('WEBHOOK_ENDPOINT_NOT_FOUND');
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(await testEventsWritten(embedded)).toBe(eventsBefore);
  });

  it('refuses a disabled endpoint with WEBHOOK_ENDPOINT_DISABLED, and sends nothing', async () => {
    const endpoint = await register(embedded, 'to-disable', `${bystander.url}/disabled`);
    await gql(embedded, UPDATE, {
      input: { idempotencyKey: 'disable-it', endpointId: endpoint.id, enabled: false },
    });
    const eventsBefore = await testEventsWritten(embedded);
    const refused = await gql(embedded, SEND_TEST, {
      input: { idempotencyKey: 'test-disabled', endpointId: endpoint.id },
    });
    expect(errorCodeOf(refused)).toBe('WEBHOOK_ENDPOINT_DISABLED');
    expect(await testEventsWritten(embedded)).toBe(eventsBefore);
  });
});

describe('production (DATABASE_URL, WEBHOOK_ALLOWED_HOSTS unset)', () => {
  it('refuses the local receiver at registration, naming the setting that would allow it', async () => {
    const refused = await gql(production, REGISTER_WEBHOOK_ENDPOINT, {
      input: { idempotencyKey: 'local-refused', url: receiver.url },
    });
    expect(errorCodeOf(refused)).toBe('WEBHOOK_URL_NOT_ALLOWED');
    expect(refused.status).toBe(400);
    expect(refused.body.errors?.[0]?.message).toBe(
      'webhook URL not allowed: 127.0.0.1 is a loopback address; to allow it set WEBHOOK_ALLOWED_HOSTS=127.0.0.1/32 and restart',
    );
  });

  it('refuses loopback at delivery too: a test event to an endpoint stored there is never sent', async () => {
    // As if registered under embedded mode's default, then run against a server of its own.
    const endpointId = randomUUID();
    await production.db.query(INSERT_ENDPOINT, [
      production.tenantIds.a,
      endpointId,
      `${receiver.url}/stored`,
      generateWebhookSecret(),
    ]);
    const before = receiver.received.length;
    const sent = field<{ delivery: { eventId: string } }>(
      await gql(production, SEND_TEST, {
        input: { idempotencyKey: 'test-to-loopback', endpointId },
      }),
      'sendTestWebhookEvent',
    );
    await production.app.services.dispatcher.dispatchOnce();
    const listed = field<{ edges: Array<{ node: { eventId: string } }> }>(
      await gql(production, DELIVERIES, { endpointId }),
      'webhookDeliveries',
    );
    expect(listed.edges.map((e) => e.node)).toEqual([
      {
        eventId: sent.delivery.eventId,
        eventType: 'webhook_endpoint.test',
        status: 'pending',
        attempts: 1,
        lastError: 'address_not_allowed',
      },
    ]);
    expect(receiver.received.length).toBe(before);
  });
});

describe('npm start on DATABASE_URL', () => {
  let gateway: GatewayProcess | undefined;
  afterAll(async () => {
    await gateway?.kill('SIGTERM');
  });

  it('prints no loopback line and refuses the local receiver, naming the setting', async () => {
    // WEBHOOK_ALLOWED_HOSTS empty is unset: production's rules.
    gateway = await startGatewayProcess({
      databaseUrl: productionDatabase.url,
      pspUrl: null,
      env: { WEBHOOK_ALLOWED_HOSTS: '' },
    });
    expect(gateway.output()).not.toContain('webhooks:');
    const refused = await graphql(gateway.url, {
      apiKey: TENANT_A.apiKey,
      query: REGISTER_WEBHOOK_ENDPOINT,
      variables: { input: { idempotencyKey: 'process-refused', url: receiver.url } },
    });
    expect(errorCodeOf(refused)).toBe('WEBHOOK_URL_NOT_ALLOWED');
    expect(refused.body.errors?.[0]?.message).toMatch(
      /; to allow it set WEBHOOK_ALLOWED_HOSTS=127\.0\.0\.1\/32 and restart$/,
    );
  });
});
