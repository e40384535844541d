import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type App } from '../../app/app.ts';
import { reconcileUnknownRequests } from '../../services/payments/reconcile-operations.ts';
import { errorCodeOf, graphql, paymentOf, type GraphQLAnswer } from '../support/graphql-client.ts';
import { CAPTURE_PAYMENT, REFUND_PAYMENT } from '../support/operations.ts';
import {
  createPaymentOn,
  INTERNAL_TOKEN,
  paymentInput,
  TENANT_A,
  testKeyring,
  useTestStackOn,
} from '../support/test-stack.ts';
import { useTestDatabase } from '../support/test-database.ts';

/**
 * Captures and refunds whose provider never answers, as createPayment's charges: after
 * PROVIDER_UNKNOWN_AFTER_ATTEMPTS unanswered attempts they are unknown, answered OUTCOME_PENDING
 * and sent no more; the unknown gauge counts them; reconciliation asks the provider and settles
 * them: found (the capture reached the provider, only its answer was lost) or sent again once
 * proven absent (the refund never reached it). One effect each.
 *
 * A second gateway on the same database reaches the sandbox through `silent`, a provider front
 * that never answers: it forwards POSTs to the sandbox (which applies them) or drops them, and
 * hangs every probe.
 */
const PROVIDER_TIMEOUT_MS = 200;
const UNKNOWN_AFTER_ATTEMPTS = 2;
const database = useTestDatabase('unknown_operations');
const stack = useTestStackOn(database);

let silent: { url: string; forward: boolean; seen: string[]; close(): Promise<void> };
let cut: App;

async function silentFront(sandboxUrl: string): Promise<typeof silent> {
  const state = { forward: true, seen: [] as string[] };
  const server: Server = createServer((request: IncomingMessage) => {
    state.seen.push(`${request.method} ${request.url}`);
    if (request.method !== 'POST' || !state.forward) return; // never answered
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const key = request.headers['idempotency-key'];
      void fetch(`${sandboxUrl}${request.url}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(typeof key === 'string' ? { 'idempotency-key': key } : {}),
        },
        body: Buffer.concat(chunks),
      }); // applied at the provider; its answer goes nowhere
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  });
}

beforeAll(async () => {
  silent = await silentFront(stack.sandbox.url);
  cut = await startApp({
    databaseUrl: database.url,
    pspUrl: silent.url,
    internalToken: INTERNAL_TOKEN,
    keyring: testKeyring(),
    leaseMs: 5_000,
    ttlSeconds: 86_400,
    recoveryIntervalMs: 60_000,
    providerTimeoutMs: PROVIDER_TIMEOUT_MS,
    unknownAfterAttempts: UNKNOWN_AFTER_ATTEMPTS,
    startRecoveryWorker: false,
    logLevel: 'silent',
  });
});
afterAll(async () => {
  await cut.stop();
  await silent.close();
});

function operateOn(app: App, query: string, input: Record<string, unknown>) {
  return graphql(app.url, { apiKey: TENANT_A.apiKey, query, variables: { input } });
}

async function unknownGauge(operation: string): Promise<number> {
  const text = await (await fetch(`${cut.url}/metrics`)).text();
  const line = new RegExp(
    `idempotency_unknown_outcomes\\{[^}]*operation="${operation}"[^}]*\\} (\\d+)`,
  );
  return Number(line.exec(text)?.[1] ?? NaN);
}

/** Sends until the request is unknown; every answer is OUTCOME_PENDING with its payment. */
async function untilUnknown(send: () => Promise<GraphQLAnswer>, paymentId: string) {
  const answers: GraphQLAnswer[] = [];
  for (let attempt = 0; attempt < UNKNOWN_AFTER_ATTEMPTS; attempt++) answers.push(await send());
  for (const answer of answers) {
    expect(errorCodeOf(answer)).toBe('OUTCOME_PENDING');
    expect(answer.body.errors?.[0]?.extensions?.['paymentId']).toBe(paymentId);
  }
  expect(answers.at(-1)?.body.errors?.[0]?.extensions?.['retryAfterSeconds']).toBe(30);
}

describe('a capture the provider applied but never answered', () => {
  it('becomes unknown, is sent no more, and reconciliation finds it: one capture', async () => {
    silent.forward = true;
    silent.seen.length = 0;
    const payment = paymentOf(
      await createPaymentOn(stack, paymentInput('uo-cap', { captureMethod: 'MANUAL' })),
    );
    const chargeId = payment.providerReference!;
    const input = { idempotencyKey: 'uo-cap-1', paymentId: payment.id };
    const send = () => operateOn(cut, CAPTURE_PAYMENT, input);
    await untilUnknown(send, payment.id);
    // The first attempt sent the capture, then probed; the resumed second probed first.
    expect(silent.seen.filter((s) => s.startsWith('POST'))).toHaveLength(1);
    expect(silent.seen.filter((s) => s.startsWith('GET /v1/captures/'))).toHaveLength(2);
    expect(await unknownGauge('capturePayment')).toBe(1);

    const sentBefore = silent.seen.length;
    expect(errorCodeOf(await send())).toBe('OUTCOME_PENDING');
    expect(silent.seen).toHaveLength(sentBefore); // unknown: retries call nothing

    const report = await reconcileUnknownRequests(stack.app.services.deps, 'reconciliation');
    expect(report.operations).toMatchObject({ examined: 1, settled: 1, undecided: 0 });
    const applied = stack.sandbox.operations({ chargeId }).filter((o) => o.applied);
    expect(applied).toEqual([expect.objectContaining({ kind: 'capture' })]);
    expect(stack.sandbox.operations({ chargeId })).toHaveLength(1); // never sent again
    const replay = await operateOn(stack.app, CAPTURE_PAYMENT, input);
    expect(replay.body.data?.['capturePayment']).toMatchObject({
      payment: { status: 'SUCCEEDED' },
      idempotency: { replayed: true },
    });
    expect(await unknownGauge('capturePayment')).toBe(0);
    const { rows } = await stack.db.query<{ action: string; decided_by: string }>(
      `SELECT action, decided_by FROM idempotency_interventions WHERE key = 'uo-cap-1'`,
    );
    expect(rows).toEqual([{ action: 'redriven', decided_by: 'reconciliation' }]);
  });
});

describe('a refund that never reached the provider', () => {
  it('becomes unknown, and reconciliation sends it once the provider says it has none', async () => {
    silent.forward = false;
    const payment = paymentOf(await createPaymentOn(stack, paymentInput('uo-ref')));
    const chargeId = payment.providerReference!;
    const input = { idempotencyKey: 'uo-ref-1', paymentId: payment.id, amount: '3.00' };
    await untilUnknown(() => operateOn(cut, REFUND_PAYMENT, input), payment.id);
    expect(stack.sandbox.refunds({ chargeId })).toHaveLength(0);
    expect(await unknownGauge('refundPayment')).toBe(1);

    const report = await reconcileUnknownRequests(stack.app.services.deps, 'reconciliation');
    expect(report.operations).toMatchObject({ examined: 1, settled: 1 });
    expect(stack.sandbox.refunds({ chargeId })).toHaveLength(1);
    const replay = await operateOn(stack.app, REFUND_PAYMENT, input);
    expect(replay.body.data?.['refundPayment']).toMatchObject({
      refund: { amount: '3.00', status: 'SUCCEEDED' },
      idempotency: { replayed: true },
    });
  });

  it('stays unknown while the provider does not answer the reconciliation either', async () => {
    const payment = paymentOf(await createPaymentOn(stack, paymentInput('uo-still')));
    const input = { idempotencyKey: 'uo-still-1', paymentId: payment.id, amount: '1.00' };
    await untilUnknown(() => operateOn(cut, REFUND_PAYMENT, input), payment.id);
    // Reconciled from the gateway that still cannot reach the provider.
    const report = await reconcileUnknownRequests(cut.services.deps, 'reconciliation');
    expect(report.operations).toMatchObject({ examined: 1, settled: 0, undecided: 1 });
    const { rows } = await stack.db.query<{ state: string }>(
      `SELECT state FROM idempotency_keys WHERE key = 'uo-still-1'`,
    );
    expect(rows).toEqual([{ state: 'unknown' }]);
    expect(stack.sandbox.refunds({ chargeId: payment.providerReference! })).toHaveLength(0);
  });
});
