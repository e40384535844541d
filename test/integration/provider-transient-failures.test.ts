import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../support/test-database.ts';
import { errorCodeOf, paymentOf } from '../support/graphql-client.ts';
import {
  createPaymentOn,
  paymentInput,
  type TestStack,
  useTestStackOn,
} from '../support/test-stack.ts';

/**
 * Transient provider failures (503s) are never stored as a result: the key stays retryable and
 * the next attempt uses the same derived provider key. Timeouts: unknown-outcomes.test.ts.
 */
const database = useTestDatabase('transient');
// One provider attempt per request, so each 503 reaches the client.
const oneAttempt = useTestStackOn(database, {
  app: { providerMaxAttempts: 1, providerTimeoutMs: 300 },
});
const threeAttempts = useTestStackOn(database, { app: { providerMaxAttempts: 3 } });

async function keyRow(stack: TestStack, key: string) {
  const { rows } = await stack.db.query<{
    state: string;
    recovery_point: string;
    attempts: number;
    response: unknown;
  }>(
    `SELECT k.state, k.recovery_point, k.attempts, coalesce(r.sealed::text, r.body::text) AS response
       FROM idempotency_keys k LEFT JOIN idempotency_responses r ON r.request_id = k.id
      WHERE k.key = $1`,
    [key],
  );
  return rows[0];
}

describe('pm_card_unavailable (503 twice, then approved)', () => {
  it('is never stored as a failure: each 503 answers PROVIDER_UNAVAILABLE and leaves the key retryable', async () => {
    const input = paymentInput('unavail-1', {
      amount: '9.99',
      paymentMethod: 'pm_card_unavailable',
    });
    const send = () => createPaymentOn(oneAttempt, input);

    for (let attempt = 1; attempt <= 2; attempt++) {
      const refused = await send();
      expect(refused.status).toBe(503);
      expect(errorCodeOf(refused)).toBe('PROVIDER_UNAVAILABLE');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(refused.body.errors?.[0]?.extensions?.['paymentId']).toEqual(expect.any(String));
      expect(await keyRow(oneAttempt, 'unavail-1')).toMatchObject({
        state: 'started',
        recovery_point: 'provider_charge_sent',
        attempts: attempt,
        response: null,
      });
      const { rows } = await oneAttempt.db.query(
        `SELECT status FROM payments WHERE reference = 'unavail-1'`,
      );
      expect(rows).toEqual([{ status: 'PROCESSING' }]);
    }
    const approved = await send();
    expect(paymentOf(approved).status).toBe('SUCCEEDED');
    expect(oneAttempt.sandbox.charges({ reference: 'unavail-1' })).toHaveLength(1);
    expect(oneAttempt.sandbox.attempts({ reference: 'unavail-1' })).toBe(3);
    // The provider saw one key throughout: the one stored with the payment, not one per attempt.
    const keys = new Set(
      oneAttempt.sandbox.charges({ reference: 'unavail-1' }).map((c) => c.idempotencyKey),
    );
    const stored = await oneAttempt.db.query<{ provider_key: string }>(
      'SELECT provider_key FROM payments WHERE id = $1',
      [paymentOf(approved).id],
    );
    expect([...keys]).toEqual([stored.rows[0]?.provider_key]);
  });

  it('with in-request retries, one request ends SUCCEEDED with one charge', async () => {
    const input = paymentInput('unavail-2', {
      amount: '9.99',
      paymentMethod: 'pm_card_unavailable',
    });
    const answer = await createPaymentOn(threeAttempts, input);
    expect(paymentOf(answer).status).toBe('SUCCEEDED');
    expect(threeAttempts.sandbox.charges({ reference: 'unavail-2' })).toHaveLength(1);
    const metrics = await (await fetch(`${threeAttempts.app.url}/metrics`)).text();
    expect(metrics).toMatch(
      /provider_calls_total\{service="provider",operation="createPayment",outcome="error"\} 2/,
    );
  });
});
