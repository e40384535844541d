import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxPsp, type SandboxPsp } from '../../sandbox-psp/sandbox-server.ts';
import { startGatewayProcess } from '../support/gateway-process.ts';
import { graphql, paymentOf } from '../support/graphql-client.ts';
import { CREATE_PAYMENT } from '../support/operations.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { paymentInput, TENANT_A } from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';

/**
 * A real gateway SIGKILLed between an outbox consumer's effect and its mark: after a restart the
 * delivery is made again — the ledger still holds one posting, and the merchant's receiver sees
 * the same webhook-id twice, both signatures valid.
 */
const database = useTestDatabase('outbox-crash');
/** The dispatcher's claim lease: a dead dispatcher's deliveries are due again after this. */
const CLAIM_LEASE_MS = '1000';
const ENV = { OUTBOX_CLAIM_LEASE_MS: CLAIM_LEASE_MS, RECOVERY_INTERVAL_MS: '3600000' };
let sandbox: SandboxPsp;
let db: pg.Pool;
let receiver: Server;
let receiverUrl: string;
let secret = '';
const received: Array<{ id: string; verified: boolean }> = [];

beforeAll(async () => {
  sandbox = await startSandboxPsp();
  db = new pg.Pool({ connectionString: database.url, max: 2 });
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      let verified = true;
      try {
        new Webhook(secret).verify(body, {
          'webhook-id': String(req.headers['webhook-id']),
          'webhook-timestamp': String(req.headers['webhook-timestamp']),
          'webhook-signature': String(req.headers['webhook-signature']),
        });
      } catch {
        verified = false;
      }
      received.push({ id: String(req.headers['webhook-id']), verified });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
});
afterAll(async () => {
  await sandbox?.close();
  await db?.end();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
});

async function waitFor(condition: () => Promise<boolean>, what: string): Promise<void> {
  await waitUntil(condition, { timeoutMs: 20_000, intervalMs: 100, what });
}

async function deliveryStatus(
  eventId: string,
  consumerPrefix: string,
): Promise<string | undefined> {
  const { rows } = await db.query<{ status: string }>(
    `SELECT status FROM outbox_deliveries WHERE event_id = $1 AND consumer LIKE $2`,
    [eventId, `${consumerPrefix}%`],
  );
  return rows[0]?.status;
}

describe('SIGKILL between an outbox effect and its mark', () => {
  it('the ledger posting is made once, though delivered twice', async () => {
    const victim = await startGatewayProcess({
      databaseUrl: database.url,
      pspUrl: sandbox.url,
      env: { ...ENV, FAULT_POINTS: 'outbox.ledger.after-handle=crash' },
    });
    const payment = paymentOf(
      await graphql(victim.url, {
        apiKey: TENANT_A.apiKey,
        query: CREATE_PAYMENT,
        variables: { input: paymentInput('outbox-ledger') },
      }),
    );
    expect(await victim.exited).toMatchObject({ signal: 'SIGKILL' }); // died right after posting
    const eventId = `evt_payment_${payment.id}_succeeded`;
    expect(await deliveryStatus(eventId, 'ledger')).toBe('pending');
    const healed = await startGatewayProcess({
      databaseUrl: database.url,
      pspUrl: sandbox.url,
      env: ENV,
    });
    try {
      await waitFor(
        async () => (await deliveryStatus(eventId, 'ledger')) === 'delivered',
        'the ledger delivery',
      );
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ledger_postings WHERE payment_id = $1`,
        [payment.id],
      );
      expect(rows[0]?.n).toBe(1);
      const { rows: inbox } = await db.query(`SELECT 1 FROM inbox_messages WHERE message_id = $1`, [
        eventId,
      ]);
      expect(inbox).toHaveLength(1);
    } finally {
      await healed.kill('SIGTERM');
    }
  });

  it('the merchant sees the same webhook-id again, signed', async () => {
    const setup = await startGatewayProcess({
      databaseUrl: database.url,
      pspUrl: sandbox.url,
      env: ENV,
    });
    try {
      const registered = await graphql(setup.url, {
        apiKey: TENANT_A.apiKey,
        query: `mutation($input: RegisterWebhookEndpointInput!) { registerWebhookEndpoint(input: $input) { endpoint { secret } } }`,
        variables: { input: { idempotencyKey: 'outbox-hook', url: receiverUrl } },
      });
      secret = (
        registered.body.data?.['registerWebhookEndpoint'] as { endpoint: { secret: string } }
      ).endpoint.secret;
    } finally {
      await setup.kill('SIGTERM');
    }
    const victim = await startGatewayProcess({
      databaseUrl: database.url,
      pspUrl: sandbox.url,
      env: { ...ENV, FAULT_POINTS: 'outbox.webhook.after-handle=crash' },
    });
    const payment = paymentOf(
      await graphql(victim.url, {
        apiKey: TENANT_A.apiKey,
        query: CREATE_PAYMENT,
        variables: { input: paymentInput('outbox-webhook') },
      }),
    );
    expect(await victim.exited).toMatchObject({ signal: 'SIGKILL' }); // died right after sending
    const eventId = `evt_payment_${payment.id}_succeeded`;
    expect(received.filter((r) => r.id === eventId)).toHaveLength(1);
    const healed = await startGatewayProcess({
      databaseUrl: database.url,
      pspUrl: sandbox.url,
      env: ENV,
    });
    try {
      await waitFor(
        async () => (await deliveryStatus(eventId, 'webhook:')) === 'delivered',
        'the webhook delivery',
      );
      const deliveries = received.filter((r) => r.id === eventId);
      expect(deliveries).toHaveLength(2);
      expect(deliveries.every((d) => d.verified)).toBe(true);
    } finally {
      await healed.kill('SIGTERM');
    }
  });
});
