import { createServer, type Server } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startApp } from '../../app/app.ts';
import { errorCodeOf, graphql, paymentOf, type GraphQLAnswer } from '../support/graphql-client.ts';
import { useTestDatabase } from '../support/test-database.ts';
import {
  createPaymentOn,
  INTERNAL_TOKEN,
  paymentInput,
  TENANT_A,
  testKeyring,
  useTestStackOn,
} from '../support/test-stack.ts';
import { CAPTURE_PAYMENT } from '../support/operations.ts';

/**
 * Edges of capture, refund and cancel that a mutation run showed no test guarded: a replayed
 * refund answers as it was first answered; a provider refusal keeps its own code; the partial
 * unique index is a real backstop; a capture's timeout never makes it 'unknown'.
 */
const database = useTestDatabase('operation-edges');
const stack = useTestStackOn(database);

// Its own selection: the replay test compares the whole refundPayment answer with toEqual.
const REFUND = `mutation($input: RefundPaymentInput!) { refundPayment(input: $input) {
  refund { id amount status }
  payment { id amountRefunded refunds { id amount status } }
  idempotency { replayed } } }`;

const refund = (input: Record<string, unknown>): Promise<GraphQLAnswer> =>
  graphql(stack.app.url, { apiKey: TENANT_A.apiKey, query: REFUND, variables: { input } });

async function paid(key: string, overrides: Record<string, unknown> = {}) {
  const payment = paymentOf(
    await createPaymentOn(stack, paymentInput(key, { amount: '10.00', ...overrides })),
  );
  return { id: payment.id, chargeId: payment.providerReference! };
}

describe('payment operation edges', () => {
  it('a replayed refund answers as it was first answered, not as the payment stands now', async () => {
    const { id } = await paid('edge-replay');
    const first = (await refund({ idempotencyKey: 'edge-replay-a', paymentId: id, amount: '4.00' }))
      .body.data?.['refundPayment'];
    expect(first).toMatchObject({ payment: { amountRefunded: '4.00' } });
    const b = await refund({ idempotencyKey: 'edge-replay-b', paymentId: id, amount: '3.00' });
    expect(b.body.data?.['refundPayment']).toMatchObject({ payment: { amountRefunded: '7.00' } });
    const replay = await refund({ idempotencyKey: 'edge-replay-a', paymentId: id, amount: '4.00' });
    expect(replay.body.data?.['refundPayment']).toEqual({
      ...(first as object),
      idempotency: { replayed: true },
    });
  });

  it('a provider refusal keeps its code (AMOUNT_EXCEEDS_REFUNDABLE), is stored and replayed', async () => {
    const { id, chargeId } = await paid('edge-oob');
    // Out of band: 5.00 refunded at the provider directly, so the gateway still thinks 10.00 is refundable.
    const oob = await fetch(new URL(`/v1/charges/${chargeId}/refunds`, stack.sandbox.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'edge-oob-direct' },
      body: JSON.stringify({ amount: '5.00' }),
    });
    expect(oob.status).toBeLessThan(300);
    const input = { idempotencyKey: 'edge-oob-ref', paymentId: id, amount: '10.00' };
    const refused = await refund(input);
    expect([errorCodeOf(refused), refused.status]).toEqual(['AMOUNT_EXCEEDS_REFUNDABLE', 422]);
    const replayed = await refund(input);
    expect([errorCodeOf(replayed), replayed.body.extensions]).toEqual([
      'AMOUNT_EXCEEDS_REFUNDABLE',
      { idempotency: { replayed: true } },
    ]);
    const { rows } = await stack.db.query(
      `SELECT status, failure_code FROM payment_operations WHERE payment_id = $1 AND kind = 'refund'`,
      [id],
    );
    expect(rows).toEqual([{ status: 'FAILED', failure_code: 'AMOUNT_EXCEEDS_REFUNDABLE' }]);
  });

  it('the partial unique index refuses a second live capture or cancel even if code let one through', async () => {
    const { id } = await paid('edge-uq', { captureMethod: 'MANUAL' });
    const insert = (kind: string, status: string) =>
      stack.db.query(
        `INSERT INTO payment_operations (tenant_id, id, payment_id, kind, status, provider_key)
         VALUES ($1, gen_random_uuid(), $2, $3, $4, gen_random_uuid()::text)`,
        [stack.tenantIds.a, id, kind, status],
      );
    await insert('capture', 'FAILED'); // a failed settlement does not count
    await insert('capture', 'PROCESSING');
    await expect(insert('cancel', 'PROCESSING')).rejects.toMatchObject({
      code: '23505',
      constraint: 'payment_operations_one_settlement_uq',
    });
    await expect(insert('capture', 'SUCCEEDED')).rejects.toMatchObject({ code: '23505' });
  });

  it('a capture the provider never answers becomes unknown, and its retries send nothing', async () => {
    const { id } = await paid('edge-timeout', { captureMethod: 'MANUAL' });
    const seen: string[] = [];
    // Accepts, never answers.
    const hanging: Server = createServer((request) =>
      seen.push(`${request.method} ${request.url}`),
    );
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const address = hanging.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    const app = await startApp({
      databaseUrl: database.url,
      pspUrl: `http://127.0.0.1:${address.port}`,
      internalToken: INTERNAL_TOKEN,
      keyring: testKeyring(),
      leaseMs: 5_000,
      ttlSeconds: 86_400,
      recoveryIntervalMs: 60_000,
      providerTimeoutMs: 200,
      unknownAfterAttempts: 1,
      startRecoveryWorker: false,
      reportError: () => undefined,
    });
    try {
      const answer = await graphql(app.url, {
        apiKey: TENANT_A.apiKey,
        query: CAPTURE_PAYMENT,
        variables: { input: { idempotencyKey: 'edge-timeout-cap', paymentId: id } },
      });
      expect(errorCodeOf(answer)).toBe('OUTCOME_PENDING');
      expect(answer.body.errors?.[0]?.extensions?.['paymentId']).toBe(id);
      const { rows } = await stack.db.query(
        `SELECT state FROM idempotency_keys WHERE key = 'edge-timeout-cap'`,
      );
      // PROVIDER_UNKNOWN_AFTER_ATTEMPTS is 1 here: the one unanswered attempt makes it unknown.
      expect(rows).toEqual([{ state: 'unknown' }]);
      // The capture, then a probe for it within the same attempt.
      expect(seen).toEqual([
        expect.stringMatching(/^POST \/v1\/charges\/ch_\w+\/capture$/),
        expect.stringMatching(/^GET \/v1\/captures\/by-idempotency-key\//),
      ]);
      const retry = await graphql(app.url, {
        apiKey: TENANT_A.apiKey,
        query: CAPTURE_PAYMENT,
        variables: { input: { idempotencyKey: 'edge-timeout-cap', paymentId: id } },
      });
      expect(errorCodeOf(retry)).toBe('OUTCOME_PENDING');
      expect(retry.body.errors?.[0]?.extensions).toMatchObject({
        paymentId: id,
        retryAfterSeconds: 30,
      });
      expect(seen).toHaveLength(2);
    } finally {
      await app.stop();
      hanging.closeAllConnections();
      await new Promise((resolve) => hanging.close(resolve));
    }
  });
});
