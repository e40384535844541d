import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OutboxDispatcher } from '../../lib/outbox/dispatcher.ts';
import { outboxConsumers } from '../../app/compose.ts';
import { INSERT_ENDPOINT } from '../../services/notifications/notifications.sql.ts';
import { generateWebhookSecret } from '../../services/notifications/webhook-signature.ts';
import {
  createWebhookEgress,
  type ResolveAllAddresses,
  type WebhookEgress,
} from '../../services/notifications/webhook-egress.client.ts';
import {
  EMPTY_WEBHOOK_ALLOW_LIST,
  parseWebhookAllowList,
  type WebhookAllowList,
} from '../../services/notifications/webhook-url.policy.ts';
import { startGatewayProcess } from '../support/gateway-process.ts';
import { errorCodeOf, graphql, paymentOf } from '../support/graphql-client.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { createPaymentOn, paymentInput, TENANT_A, useTestStackOn } from '../support/test-stack.ts';
import { REGISTER_WEBHOOK_ENDPOINT } from '../support/operations.ts';

/**
 * Webhook egress (SSRF): registration refuses URLs that point inside and stores nothing for the
 * key; delivery never follows a redirect, and refuses a name that resolves inside unless the
 * allow-list says otherwise. Every sink here counts what it truly received.
 */
/** A name only this test's resolver knows: it answers 127.0.0.1, the sink's address. */
const SINK_NAME = 'hooks.merchant.test';
/** Receives every request it is sent and counts it, by path. */
let sink: Server;
let sinkPort = 0;
const sinkHits: string[] = [];
/** A merchant endpoint that answers every delivery with a redirect to the sink. */
let redirector: Server;
let redirectorPort = 0;

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

beforeAll(async () => {
  sink = createServer((req, res) => {
    sinkHits.push(req.url ?? '');
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  sinkPort = await listen(sink);
  redirector = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      res.writeHead(302, { location: `http://127.0.0.1:${sinkPort}/stolen` }).end(),
    );
  });
  redirectorPort = await listen(redirector);
});
afterAll(async () => {
  for (const server of [sink, redirector]) {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
});
// After the sinks: stopped before they are closed. Registration must accept the loopback sink
// and SINK_NAME over plain http: both are listed.
const database = useTestDatabase('webhook-egress');
const stack = useTestStackOn(database, {
  app: { webhookAllowList: parseWebhookAllowList(`127.0.0.1/32,${SINK_NAME}`) },
});
beforeEach(async () => {
  // One endpoint per scenario: earlier ones must not receive (or fail) this one's events, nor
  // count against the tenant's cap on endpoints (WEBHOOK_ENDPOINTS_PER_TENANT).
  await stack.db.query(`UPDATE webhook_endpoints SET status = 'deleted'`);
});

const register = (idempotencyKey: string, url: string) =>
  graphql(stack.app.url, {
    apiKey: TENANT_A.apiKey,
    query: REGISTER_WEBHOOK_ENDPOINT,
    variables: { input: { idempotencyKey, url } },
  });

async function registered(key: string, url: string): Promise<string> {
  const answer = await register(key, url);
  const payload = answer.body.data?.['registerWebhookEndpoint'] as
    { endpoint: { id: string } } | undefined;
  if (payload === undefined) throw new Error(JSON.stringify(answer.body));
  return payload.endpoint.id;
}

async function countWhere(sql: string, params: unknown[]): Promise<number> {
  const { rows } = await stack.db.query<{ n: number }>(sql, params);
  return rows[0]?.n ?? 0;
}

/**
 * A payment's events delivered through `egress` (the stack's own unless given): the fan-out,
 * then one attempt at each endpoint's delivery. Failed attempts are due later, so one pass
 * makes exactly one attempt.
 */
async function deliverOnePayment(key: string, egress?: WebhookEgress): Promise<string> {
  const payment = paymentOf(await createPaymentOn(stack, paymentInput(key)));
  const { deps, caller } = stack.app.services;
  const dispatcher = new OutboxDispatcher({
    pool: deps.pool,
    faults: deps.faults,
    metrics: deps.metrics,
    ...outboxConsumers(egress === undefined ? deps : { ...deps, webhookEgress: egress }, caller),
    serviceOf: (kind) => (kind === 'ledger' ? 'ledger' : 'notifications'),
    intervalMs: 60_000,
    onError: () => undefined,
  });
  for (let round = 0; round < 20; round++) {
    if ((await dispatcher.dispatchOnce()) === 0) break;
  }
  return `evt_payment_${payment.id}_succeeded`;
}

async function webhookAttempt(
  eventId: string,
  endpointId: string,
): Promise<{ status: string; attempts: number; due_later: boolean; last_error: string | null }> {
  const { rows } = await stack.db.query<{
    status: string;
    attempts: number;
    due_later: boolean;
    last_error: string | null;
  }>(
    `SELECT status, attempts, next_attempt_at > now() AS due_later, last_error
       FROM outbox_deliveries WHERE event_id = $1 AND consumer = $2`,
    [eventId, `webhook:${endpointId}`],
  );
  if (rows[0] === undefined) throw new Error(`no delivery of ${eventId} to ${endpointId}`);
  return rows[0];
}

/** What one failed attempt leaves of a delivery: still pending, tried once, due again later. */
const failedOnce = (lastError: string) => ({
  status: 'pending',
  attempts: 1,
  due_later: true,
  last_error: lastError,
});

/** An egress for one scenario; the test owns it and closes it. */
async function withEgress<T>(
  opts: { allowList: WebhookAllowList; resolveAll?: ResolveAllAddresses },
  run: (egress: WebhookEgress) => Promise<T>,
): Promise<T> {
  const egress = createWebhookEgress(opts);
  try {
    return await run(egress);
  } finally {
    await egress.close();
  }
}

const resolvesTo =
  (...addresses: string[]): ResolveAllAddresses =>
  (hostname) =>
    hostname === SINK_NAME
      ? Promise.resolve(
          addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
        )
      : Promise.reject(
          Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }),
        );

describe('registration', () => {
  it.each([
    'https://169.254.169.254/latest/meta-data/',
    'https://10.0.0.1/hooks',
    'https://[::ffff:a9fe:a9fe]/hooks',
    'http://2852039166/hooks',
    'https://0xa9fe.0xa9fe/hooks',
    'https://localhost/hooks',
    'https://hooks.example.com:22/hooks',
    'https://hooks.example.com:0/hooks',
    'https://hooks.example.com:5432/hooks',
  ])(
    'of %s answers WEBHOOK_URL_NOT_ALLOWED (400), stores nothing, and the key stays free',
    async (url) => {
      const key = `refused-${url.replace(/[^A-Za-z0-9]/g, '')}`;
      const endpoints = `SELECT count(*)::int AS n FROM webhook_endpoints`;
      const endpointsBefore = await countWhere(endpoints, []);
      const refused = await register(key, url);
      expect(errorCodeOf(refused), JSON.stringify(refused.body)).toBe('WEBHOOK_URL_NOT_ALLOWED');
      expect(refused.status).toBe(400);
      expect(refused.body.errors?.[0]?.message).toMatch(/^webhook URL not allowed: /);
      expect(
        await countWhere(`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = $1`, [key]),
      ).toBe(0);
      expect(await countWhere(endpoints, [])).toBe(endpointsBefore);
      // The same key with a good URL executes: the refusal was not stored for it.
      const good = await register(key, 'https://hooks.example.com/payments');
      expect(good.body.errors).toBeUndefined();
      expect(good.body.data?.['registerWebhookEndpoint']).toMatchObject({
        endpoint: { url: 'https://hooks.example.com/payments', status: 'enabled' },
        idempotency: { replayed: false },
      });
    },
  );

  it('stores no endpoint for any refused URL', async () => {
    expect(
      await countWhere(
        `SELECT count(*)::int AS n FROM webhook_endpoints WHERE url NOT LIKE 'https://hooks.example.com/%'`,
        [],
      ),
    ).toBe(0);
  });
});

describe('delivery', () => {
  it('never follows a redirect: a 302 to the sink is a failed attempt, and the sink gets nothing', async () => {
    const endpointId = await registered(
      'hook-redirect',
      `http://127.0.0.1:${redirectorPort}/hooks`,
    );
    const hitsBefore = sinkHits.length;
    const eventId = await deliverOnePayment('redirect-1');
    expect(await webhookAttempt(eventId, endpointId)).toEqual(failedOnce('http_status: 302'));
    expect(sinkHits.slice(hitsBefore)).toEqual([]);
  });

  it('refuses a name that resolves to loopback when neither it nor the address is allowed', async () => {
    const endpointId = await registered(
      'hook-name-refused',
      `http://${SINK_NAME}:${sinkPort}/by-name`,
    );
    const hitsBefore = sinkHits.length;
    const eventId = await withEgress(
      { allowList: EMPTY_WEBHOOK_ALLOW_LIST, resolveAll: resolvesTo('127.0.0.1') },
      (egress) => deliverOnePayment('name-refused-1', egress),
    );
    expect(await webhookAttempt(eventId, endpointId)).toEqual(failedOnce('address_not_allowed'));
    expect(sinkHits.slice(hitsBefore)).toEqual([]);
  });

  it('refuses a name when any one of its addresses is not allowed', async () => {
    const endpointId = await registered('hook-name-mixed', `http://${SINK_NAME}:${sinkPort}/mixed`);
    const hitsBefore = sinkHits.length;
    const eventId = await withEgress(
      {
        allowList: parseWebhookAllowList('127.0.0.1/32'),
        resolveAll: resolvesTo('127.0.0.1', '10.0.0.7'),
      },
      (egress) => deliverOnePayment('name-mixed-1', egress),
    );
    expect((await webhookAttempt(eventId, endpointId)).last_error).toBe('address_not_allowed');
    expect(sinkHits.slice(hitsBefore)).toEqual([]);
  });

  it('refuses an address literal no longer allowed, without a lookup to stop it', async () => {
    const endpointId = await registered('hook-literal', `http://127.0.0.1:${sinkPort}/literal`);
    const hitsBefore = sinkHits.length;
    const eventId = await withEgress(
      { allowList: EMPTY_WEBHOOK_ALLOW_LIST, resolveAll: resolvesTo() },
      (egress) => deliverOnePayment('literal-1', egress),
    );
    expect((await webhookAttempt(eventId, endpointId)).last_error).toBe('address_not_allowed');
    expect(sinkHits.slice(hitsBefore)).toEqual([]);
  });

  it.each([
    ['the name', SINK_NAME],
    ['the address', '127.0.0.1/32'],
  ])('delivers to a name resolving to loopback when %s is allowed', async (_what, entry) => {
    const path = `/allowed-${entry.replace(/[^a-z0-9]/g, '')}`;
    const endpointId = await registered(
      `hook-${path.slice(1)}`,
      `http://${SINK_NAME}:${sinkPort}${path}`,
    );
    const hitsBefore = sinkHits.length;
    const eventId = await withEgress(
      { allowList: parseWebhookAllowList(entry), resolveAll: resolvesTo('127.0.0.1') },
      (egress) => deliverOnePayment(`pay-${path.slice(1)}`, egress),
    );
    expect((await webhookAttempt(eventId, endpointId)).status).toBe('delivered');
    expect(sinkHits.slice(hitsBefore)).toEqual([path]);
  });
});

describe('what the tenant is told of a failed attempt', () => {
  const DELIVERIES = `query($endpointId: ID!) {
    webhookDeliveries(endpointId: $endpointId) { edges { node { eventId lastError } } } }`;

  /** The stored error, and the one GraphQL shows the tenant: the class alone, both. */
  async function toldOf(eventId: string, endpointId: string): Promise<string[]> {
    const stored = await webhookAttempt(eventId, endpointId);
    expect(stored).toMatchObject({ status: 'pending', attempts: 1, due_later: true });
    const answer = await graphql(stack.app.url, {
      apiKey: TENANT_A.apiKey,
      query: DELIVERIES,
      variables: { endpointId },
    });
    const page = answer.body.data?.['webhookDeliveries'] as
      { edges: Array<{ node: { eventId: string; lastError: string | null } }> } | undefined;
    const shown = page?.edges.find((e) => e.node.eventId === eventId)?.node.lastError;
    return [stored.last_error ?? 'null', shown ?? 'null'];
  }

  it('a closed port: connection_refused, not the address or the port', async () => {
    const closed = createServer();
    const port = await listen(closed);
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const endpointId = await registered('hook-closed', `http://127.0.0.1:${port}/closed`);
    const eventId = await deliverOnePayment('closed-1');
    expect(await toldOf(eventId, endpointId)).toEqual(['connection_refused', 'connection_refused']);
  });

  it('a host that accepts and never answers: timeout', async () => {
    const held: Socket[] = [];
    const silent = createTcpServer((socket) => void held.push(socket));
    const port = await new Promise<number>((resolve) =>
      silent.listen(0, '127.0.0.1', () => resolve((silent.address() as AddressInfo).port)),
    );
    try {
      const endpointId = await registered('hook-silent', `http://127.0.0.1:${port}/silent`);
      const eventId = await deliverOnePayment('silent-1');
      expect(await toldOf(eventId, endpointId)).toEqual(['timeout', 'timeout']);
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('a TLS handshake with a server that speaks plain http: tls_error, not OpenSSL text', async () => {
    const endpointId = await registered('hook-tls', `https://127.0.0.1:${sinkPort}/tls`);
    const hitsBefore = sinkHits.length;
    const eventId = await deliverOnePayment('tls-1');
    expect(await toldOf(eventId, endpointId)).toEqual(['tls_error', 'tls_error']);
    expect(sinkHits.slice(hitsBefore)).toEqual([]);
  });

  it('a port registered before the port rule is refused at delivery: address_not_allowed', async () => {
    const id = randomUUID();
    await stack.db.query(INSERT_ENDPOINT, [
      stack.tenantIds.a,
      id,
      `https://${SINK_NAME}:22/ssh`,
      generateWebhookSecret(),
    ]);
    const eventId = await withEgress(
      { allowList: EMPTY_WEBHOOK_ALLOW_LIST, resolveAll: resolvesTo('93.184.216.34') },
      (egress) => deliverOnePayment('port-22-1', egress),
    );
    expect(await toldOf(eventId, id)).toEqual(['address_not_allowed', 'address_not_allowed']);
  });

  it('an error stored before the classes is shown as its class', async () => {
    const endpointId = await registered('hook-legacy', `http://127.0.0.1:${redirectorPort}/legacy`);
    const eventId = await deliverOnePayment('legacy-1');
    await stack.db.query(
      `UPDATE outbox_deliveries SET last_error = $3 WHERE event_id = $1 AND consumer = $2`,
      [eventId, `webhook:${endpointId}`, 'unreachable: connect ECONNREFUSED 10.1.2.3:5432'],
    );
    expect((await toldOf(eventId, endpointId))[1]).toBe('network_error');
  });
});

describe('delivery through the system resolver', () => {
  /** Stored as if registered under an allow-list naming localhost (registration refuses it now). */
  async function localhostEndpoint(path: string): Promise<string> {
    const id = randomUUID();
    await stack.db.query(INSERT_ENDPOINT, [
      stack.tenantIds.a,
      id,
      `http://localhost:${sinkPort}${path}`,
      generateWebhookSecret(),
    ]);
    return id;
  }

  it('refuses localhost when the allow-list does not name it or its addresses', async () => {
    const endpointId = await localhostEndpoint('/localhost-refused');
    const hitsBefore = sinkHits.length;
    const eventId = await withEgress({ allowList: EMPTY_WEBHOOK_ALLOW_LIST }, (egress) =>
      deliverOnePayment('localhost-refused-1', egress),
    );
    expect((await webhookAttempt(eventId, endpointId)).last_error).toBe('address_not_allowed');
    expect(sinkHits.slice(hitsBefore)).toEqual([]);
  });

  it('delivers to localhost when the allow-list names it', async () => {
    const endpointId = await localhostEndpoint('/localhost-allowed');
    const hitsBefore = sinkHits.length;
    const eventId = await withEgress({ allowList: parseWebhookAllowList('localhost') }, (egress) =>
      deliverOnePayment('localhost-allowed-1', egress),
    );
    expect((await webhookAttempt(eventId, endpointId)).status).toBe('delivered');
    expect(sinkHits.slice(hitsBefore)).toEqual(['/localhost-allowed']);
  });
});

describe('WEBHOOK_ALLOWED_HOSTS at start', () => {
  it('a bad CIDR fails the start with a line naming the variable', async () => {
    // A gateway that started anyway is stopped here, then fails the assertion.
    const outcome = await startGatewayProcess({
      databaseUrl: database.url,
      pspUrl: stack.sandbox.url,
      env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1/32,10.0.0.0/33' },
    }).then(
      async (gateway) => {
        await gateway.kill('SIGKILL');
        return 'started';
      },
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    expect(outcome).toMatch(
      /gateway exited during start:[\s\S]*WEBHOOK_ALLOWED_HOSTS: "10\.0\.0\.0\/33"/,
    );
  });
});
