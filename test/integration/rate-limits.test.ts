import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { errorCodeOf, graphql, paymentOf, type GraphQLAnswer } from '../support/graphql-client.ts';
import { BALANCES, CREATE_PAYMENT } from '../support/operations.ts';
import { useTestDatabase } from '../support/test-database.ts';
import {
  createPaymentOn,
  keyRowOf,
  paymentInput,
  TENANT_A,
  TENANT_B,
  type TestStack,
  useTestStackOn,
} from '../support/test-stack.ts';

/**
 * docs/api.md §1.4 and §3: the per-tenant bucket and the failed-authentication limit. RATE_LIMITED
 * is 429 with Retry-After and extensions.retryAfterSeconds, and is never stored for a key.
 */
const database = useTestDatabase('rate_limits');
/** A bucket of two that refills over four seconds: room for a test's few quick requests. */
const TENANT_LIMIT = { tenantPerSecond: 0.5, tenantBurst: 2 };
const UNAUTHENTICATED_PER_SECOND = 2;
/** Bounds every wait for an answer: a request stuck on a lock fails the test instead. */
const ANSWER_DEADLINE_MS = 5_000;
const tenantLimited = useTestStackOn(database, { app: { rateLimits: TENANT_LIMIT } });
const addressLimited = useTestStackOn(database, {
  app: { rateLimits: { unauthenticatedPerSecond: UNAUTHENTICATED_PER_SECOND } },
});

function balancesOn(stack: TestStack, apiKey: string | null): Promise<GraphQLAnswer> {
  return graphql(stack.app.url, { apiKey, query: BALANCES, timeoutMs: ANSWER_DEADLINE_MS });
}

/** Sends cheap requests as `apiKey` until one is refused; the refusal, within a few tries. */
async function exhaust(stack: TestStack, apiKey: string): Promise<GraphQLAnswer> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const answer = await balancesOn(stack, apiKey);
    if (answer.status === 429) return answer;
    expect(answer.status).toBe(200);
  }
  throw new Error('the tenant was never limited');
}

function expectRateLimited(answer: GraphQLAnswer): number {
  expect(answer.status).toBe(429);
  expect(answer.body.errors).toHaveLength(1);
  expect(errorCodeOf(answer)).toBe('RATE_LIMITED');
  const header = answer.headers.get('retry-after');
  expect(header).toMatch(/^[1-9]\d*$/);
  expect(answer.body.errors?.[0]?.extensions?.['retryAfterSeconds']).toBe(Number(header));
  expect(answer.body.data).toBeUndefined();
  return Number(header);
}

describe('RATE_LIMIT_TENANT_PER_SECOND', () => {
  it('refuses a tenant over its bucket with 429 and Retry-After, and not another tenant', async () => {
    const refused = await exhaust(tenantLimited, TENANT_A.apiKey);
    const retryAfter = expectRateLimited(refused);
    // Retry-After covers the rest of the window: at most the whole bucket's refill.
    expect(retryAfter).toBeLessThanOrEqual(TENANT_LIMIT.tenantBurst / TENANT_LIMIT.tenantPerSecond);
    expect((await balancesOn(tenantLimited, TENANT_B.apiKey)).status).toBe(200);
    // Time must pass: the test's point is that the bucket refills within Retry-After.
    await sleep(retryAfter * 1000);
    expect((await balancesOn(tenantLimited, TENANT_A.apiKey)).status).toBe(200);
  });

  it('stores nothing for a refused createPayment: once refilled, the same key executes as new', async () => {
    const key = 'rate-limited-create-1';
    const stack = tenantLimited;
    await exhaust(stack, TENANT_A.apiKey);
    const refused = await createPaymentOn(stack, paymentInput(key));
    const retryAfter = expectRateLimited(refused);
    expect(await keyRowOf(stack.db, key)).toBeUndefined();
    expect(stack.sandbox.charges({ reference: key })).toHaveLength(0);

    // Time must pass: the test's point is that the bucket refills within Retry-After.
    await sleep(retryAfter * 1000);
    const executed = await createPaymentOn(stack, paymentInput(key));
    expect(executed.status).toBe(200);
    expect(paymentOf(executed).status).toBe('SUCCEEDED');
    const payload = executed.body.data?.['createPayment'] as { idempotency: { replayed: boolean } };
    expect(payload.idempotency.replayed).toBe(false);
    expect(executed.body.extensions).toBeUndefined();
    expect(stack.sandbox.charges({ reference: key })).toHaveLength(1);
    expect(stack.errors).toEqual([]);
  });
});

describe('RATE_LIMIT_UNAUTHENTICATED_PER_SECOND', () => {
  it('does not count successful authentications', async () => {
    for (let i = 0; i < 3 * UNAUTHENTICATED_PER_SECOND; i++) {
      expect((await balancesOn(addressLimited, TENANT_A.apiKey)).status).toBe(200);
    }
  });

  it('refuses an address that failed too often before its key is looked up, then lets it back', async () => {
    // With the tenants table locked, a key lookup would wait (and fail the bounded request):
    // only an answer given before the lookup comes back.
    const locker = new pg.Client({ connectionString: database.url });
    await locker.connect();
    let retryAfter: number;
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE tenants IN ACCESS EXCLUSIVE MODE');
      // Without a bearer token authentication fails without a lookup.
      for (let i = 0; i < UNAUTHENTICATED_PER_SECOND; i++) {
        const failed = await balancesOn(addressLimited, null);
        expect(failed.status).toBe(401);
        expect(errorCodeOf(failed)).toBe('UNAUTHENTICATED');
      }
      retryAfter = expectRateLimited(await balancesOn(addressLimited, 'sk_test_guessed_000000000'));
      // Every request from the address is refused meanwhile, a valid key's too.
      expectRateLimited(await balancesOn(addressLimited, TENANT_A.apiKey));
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    // Time must pass: the test's point is that the bucket refills within Retry-After.
    await sleep(retryAfter * 1000);
    expect((await balancesOn(addressLimited, TENANT_A.apiKey)).status).toBe(200);
    const wrong = await balancesOn(addressLimited, 'sk_test_guessed_000000000');
    expect(wrong.status).toBe(401);
    expect(addressLimited.errors).toEqual([]);
  });

  it('counts refusals by limit in gateway_rate_limited_total', async () => {
    const value = async (stack: TestStack, limit: string) =>
      (await stack.app.metrics.rateLimited.get()).values.find((v) => v.labels.limit === limit)
        ?.value;
    expect(await value(addressLimited, 'unauthenticated')).toBeGreaterThanOrEqual(2);
    expect(await value(addressLimited, 'tenant')).toBe(0);
    expect(await value(tenantLimited, 'tenant')).toBeGreaterThanOrEqual(2);
  });

  it('leaves the limits off unless configured', async () => {
    for (let i = 0; i < 3 * UNAUTHENTICATED_PER_SECOND; i++) {
      const answer = await graphql(tenantLimited.app.url, {
        apiKey: 'sk_test_guessed_000000000',
        query: CREATE_PAYMENT,
        variables: { input: paymentInput('never') },
        timeoutMs: ANSWER_DEADLINE_MS,
      });
      expect(answer.status).toBe(401);
    }
    for (let i = 0; i < 10; i++) {
      expect((await balancesOn(addressLimited, TENANT_B.apiKey)).status).toBe(200);
    }
  });
});
