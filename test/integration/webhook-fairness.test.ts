import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CIRCUIT_OPENS_AFTER_FAILURES,
  TENANT_REMOTE_SLOTS,
} from '../../lib/outbox/remote-deliveries.ts';
import { errorCodeOf, graphql, type GraphQLAnswer } from '../support/graphql-client.ts';
import { BALANCES, REGISTER_WEBHOOK_ENDPOINT } from '../support/operations.ts';
import {
  createPaymentOn,
  paymentInput,
  TENANT_A,
  TENANT_B,
  useTestStack,
} from '../support/test-stack.ts';
import { drainOutbox } from '../support/event-log.ts';
import { waitUntil } from '../support/wait-until.ts';
import { useWebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * No tenant's webhooks slow another's, nor anyone's ledger (issue 34; ADR 0039). Tenant A
 * registers many endpoints at a host that accepts connections and never answers, then makes
 * payments: every delivery to it hangs for the whole webhook timeout. Tenant B's webhook and
 * balance must still arrive within a few seconds of their unloaded times. A sender shared by all
 * tenants without fairness, with the ledger's batches waiting on the webhooks' (as before this
 * change), kept B waiting for a minute and more.
 */
const DEAD_ENDPOINTS = 60;
const FLOOD_PAYMENTS = 2;
/**
 * How much later than unloaded B's webhook and balance may arrive under the flood: a fair sender
 * gives B a free slot at once, so the slack is only the polling intervals'.
 */
const LOADED_SLACK_MS = 3_000;
/** Long enough for the unfair sender to be seen failing, not timing out the test. */
const WAIT_MS = 20_000;

const receiver = useWebhookReceiver();
const stack = useTestStack('webhook-fairness', {
  app: { webhookEndpointsPerTenant: DEAD_ENDPOINTS, outboxIntervalMs: 50 },
});

/** A host that accepts every connection and never answers, closed after the file. */
let hanging: Server;
const sockets = new Set<Socket>();
let hangingUrl = '';
beforeAll(async () => {
  hanging = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => hanging.close(resolve));
});

const gql = (apiKey: string, query: string, variables: Record<string, unknown> = {}) =>
  graphql(stack.app.url, { apiKey, query, variables });

async function register(apiKey: string, key: string, url: string): Promise<GraphQLAnswer> {
  return gql(apiKey, REGISTER_WEBHOOK_ENDPOINT, { input: { idempotencyKey: key, url } });
}

function endpointOf(answer: GraphQLAnswer): { id: string; secret: string } {
  const payload = answer.body.data?.['registerWebhookEndpoint'] as
    { endpoint: { id: string; secret: string } } | undefined;
  if (payload === undefined) throw new Error(`not registered: ${JSON.stringify(answer.body)}`);
  return payload.endpoint;
}

async function availableOf(apiKey: string): Promise<number> {
  const answer = await gql(apiKey, BALANCES);
  const rows = answer.body.data?.['balances'] as Array<{ currency: string; available: string }>;
  return Number(rows.find((r) => r.currency === 'EUR')?.available ?? 0);
}

/**
 * One payment of B's, and how long until its succeeded webhook reached B's receiver and its
 * amount showed in B's balance, each in ms from the moment the payment was answered.
 */
async function timeTenantB(key: string): Promise<{ webhookMs: number; balanceMs: number }> {
  const before = await availableOf(TENANT_B.apiKey);
  const answer = await createPaymentOn(stack, paymentInput(key), TENANT_B.apiKey);
  const payment = answer.body.data?.['createPayment'] as { payment: { id: string } };
  const eventId = `evt_payment_${payment.payment.id}_succeeded`;
  const answeredAt = Date.now();
  const [webhookMs, balanceMs] = await Promise.all([
    waitUntil(() => receiver.received.some((r) => r.id === eventId) && Date.now() - answeredAt, {
      timeoutMs: WAIT_MS,
      what: `tenant B's webhook ${eventId}`,
    }),
    waitUntil(
      async () => (await availableOf(TENANT_B.apiKey)) > before && Date.now() - answeredAt,
      { timeoutMs: WAIT_MS, what: "tenant B's balance to show its payment" },
    ),
  ]);
  return { webhookMs, balanceMs };
}

describe('a tenant whose endpoints all hang', () => {
  it("holds back neither another tenant's webhooks nor its balance", async () => {
    receiver.secret = endpointOf(await register(TENANT_B.apiKey, 'fair-b', receiver.url)).secret;
    stack.app.services.dispatcher.start();
    try {
      await floodAndTime();
    } finally {
      await stack.app.services.dispatcher.stop();
    }
  });
});

async function floodAndTime(): Promise<void> {
  const unloaded = await timeTenantB('fair-b-unloaded');

  for (let i = 0; i < DEAD_ENDPOINTS; i++)
    endpointOf(await register(TENANT_A.apiKey, `fair-a-${i}`, `${hangingUrl}/hook-${i}`));
  for (let i = 0; i < FLOOD_PAYMENTS; i++)
    await createPaymentOn(stack, paymentInput(`fair-a-pay-${i}`));
  // The flood is on: deliveries to the dead host are hanging.
  await waitUntil(() => sockets.size >= 4, {
    timeoutMs: WAIT_MS,
    what: 'deliveries to the hanging host',
  });

  const loaded = await timeTenantB('fair-b-loaded');
  expect(loaded.webhookMs).toBeLessThanOrEqual(unloaded.webhookMs + LOADED_SLACK_MS);
  expect(loaded.balanceMs).toBeLessThanOrEqual(unloaded.balanceMs + LOADED_SLACK_MS);
  // And the dead tenant's deliveries were held to its share of the sender.
  expect(sockets.size).toBeLessThanOrEqual(TENANT_REMOTE_SLOTS);
}

describe("a failing endpoint's circuit", () => {
  const drain = () => drainOutbox(stack.db, [stack.app.services.dispatcher]);
  const pendingTo = async (consumer: string) =>
    (
      await stack.db.query<{ attempts: number }>(
        `SELECT attempts FROM outbox_deliveries WHERE consumer = $1 AND status = 'pending'`,
        [consumer],
      )
    ).rows;

  it('opens after failures in a row, holds the deliveries, probes once, closes on a success', async () => {
    // The hanging tenant is done with: its deliveries would only slow this test down.
    await stack.db.query(
      `UPDATE outbox_deliveries SET status = 'abandoned' WHERE tenant_id = $1 AND status = 'pending'`,
      [stack.tenantIds.a],
    );
    const endpoint = (
      await stack.db.query<{ id: string }>(
        `SELECT id FROM webhook_endpoints WHERE tenant_id = $1`,
        [stack.tenantIds.b],
      )
    ).rows[0]!;
    const consumer = `webhook:${endpoint.id}`;
    const circuit = async () =>
      (
        await stack.db.query<{ failures: number; open: boolean }>(
          `SELECT failures, open_until > now() AS open FROM outbox_consumer_circuits
            WHERE consumer = $1`,
          [consumer],
        )
      ).rows;
    receiver.answerStatus = 500;
    try {
      // One failure is counted, and nothing waits for it: the next delivery is tried.
      await createPaymentOn(stack, paymentInput('circuit-first'), TENANT_B.apiKey);
      await drain();
      expect(await circuit()).toEqual([{ failures: 1, open: false }]);
      // The failed delivery's own retry is held off, however long the next drain takes: only the
      // next payment's delivery may be tried.
      await stack.db.query(
        `UPDATE outbox_deliveries SET next_attempt_at = now() + interval '1 hour'
          WHERE consumer = $1 AND status = 'pending'`,
        [consumer],
      );
      const tried = receiver.received.length;
      await createPaymentOn(stack, paymentInput('circuit-second'), TENANT_B.apiKey);
      await drain();
      expect(receiver.received.length).toBe(tried + 1);

      // Failures in a row up to the threshold open it.
      for (let i = 2; i < CIRCUIT_OPENS_AFTER_FAILURES; i++)
        await createPaymentOn(stack, paymentInput(`circuit-${i}`), TENANT_B.apiKey);
      await drain();
      const failed = receiver.received.length;
      expect(await circuit()).toEqual([{ failures: CIRCUIT_OPENS_AFTER_FAILURES, open: true }]);

      // While it is open, a new event's delivery to it is not even tried.
      await createPaymentOn(stack, paymentInput('circuit-while-open'), TENANT_B.apiKey);
      await drain();
      expect(receiver.received.length).toBe(failed);
      expect(await pendingTo(consumer)).toContainEqual({ attempts: 0 });

      // The wait is over (the circuit's and each delivery's own backoff): one delivery probes it.
      receiver.answerStatus = 200;
      await stack.db.query(
        `UPDATE outbox_consumer_circuits SET open_until = now() WHERE consumer = $1`,
        [consumer],
      );
      await stack.db.query(
        `UPDATE outbox_deliveries SET next_attempt_at = now() WHERE consumer = $1 AND status = 'pending'`,
        [consumer],
      );
      const pending = (await pendingTo(consumer)).length;
      expect(pending).toBeGreaterThan(1);
      await stack.app.services.dispatcher.dispatchOnce();
      expect(receiver.received.length).toBe(failed + 1);

      // It answered: the circuit is closed, and the rest go.
      await drain();
      expect(await pendingTo(consumer)).toEqual([]);
      expect(receiver.received.length).toBe(failed + pending);
      const { rows: left } = await stack.db.query(
        `SELECT 1 FROM outbox_consumer_circuits WHERE consumer = $1`,
        [consumer],
      );
      expect(left).toEqual([]);
    } finally {
      receiver.answerStatus = 200;
    }
  });
});

describe('the per-tenant cap on endpoints', () => {
  it('refuses one more endpoint with a stable code, stored for its key', async () => {
    const count = await stack.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_endpoints e JOIN tenants t ON t.id = e.tenant_id
        WHERE t.name = $1 AND e.status <> 'deleted'`,
      [TENANT_A.name],
    );
    expect(count.rows[0]?.n).toBe(DEAD_ENDPOINTS);
    const refused = await register(TENANT_A.apiKey, 'fair-a-over', `${hangingUrl}/over`);
    expect(errorCodeOf(refused)).toBe('WEBHOOK_ENDPOINT_LIMIT_REACHED');
    const replayed = await register(TENANT_A.apiKey, 'fair-a-over', `${hangingUrl}/over`);
    expect(errorCodeOf(replayed)).toBe('WEBHOOK_ENDPOINT_LIMIT_REACHED');
    // Another tenant's cap is its own.
    endpointOf(await register(TENANT_B.apiKey, 'fair-b-second', receiver.url));
  });
});
