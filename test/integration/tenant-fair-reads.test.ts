import { describe, expect, it } from 'vitest';
import { graphql } from '../support/graphql-client.ts';
import { createPaymentOn, paymentInput, TENANT_B, useTestStack } from '../support/test-stack.ts';

/**
 * One tenant's heavy reads leave another tenant's reads and authentication a connection (issue
 * 34; app/read-side.ts). The heavy reads here are queries that hold a read connection for
 * HOLD_SECONDS each, as many at once as the read pool has connections: on a pool shared first
 * come, first served they held every connection, and the other tenant's read or key lookup
 * waited for them to end. The assertions are about order, not speed: the other tenant is
 * answered long before the heavy reads end (half their hold), not just as they end.
 */
const stack = useTestStack('tenant-fair-reads');

/** Long enough that "answered while they still run" cannot happen by a slow machine's chance. */
const HOLD_SECONDS = 3;
/** The ORM pool's size (app/read-side.ts): enough heavy reads to hold all of it. */
const HEAVY_READS = 4;

/** Heavy reads of tenant A through the read side's gate, each holding a read connection. */
function heavyReadsOfTenantA(): Promise<number> {
  const { orm, reads } = stack.app.services.deps;
  return endedAt(
    Array.from({ length: HEAVY_READS }, () =>
      reads.run(stack.tenantIds.a, () =>
        orm.em.fork().getConnection().execute(`SELECT pg_sleep(${HOLD_SECONDS})`),
      ),
    ),
  );
}

/** When the last of `work` ended (Date.now()). */
async function endedAt(work: Array<Promise<unknown>>): Promise<number> {
  await Promise.all(work);
  return Date.now();
}

/** Answered at least half the hold before the heavy reads ended: not merely as they ended. */
const LONG_BEFORE_MS = (HOLD_SECONDS * 1000) / 2;

describe("another tenant's heavy reads", () => {
  it('leave a read of this tenant a connection: it is answered while they run', async () => {
    const created = await createPaymentOn(stack, paymentInput('fair-read-b'), TENANT_B.apiKey);
    const id = (created.body.data?.['createPayment'] as { payment: { id: string } }).payment.id;
    const heavyEnded = heavyReadsOfTenantA();
    const answer = await graphql(stack.app.url, {
      apiKey: TENANT_B.apiKey,
      query: `query($id: ID!) { payment(id: $id) { id } }`,
      variables: { id },
    });
    const answeredAt = Date.now();
    expect(answer.body.data?.['payment']).toEqual({ id });
    expect((await heavyEnded) - answeredAt).toBeGreaterThan(LONG_BEFORE_MS);
  });

  it('leave authentication its own connections: a key is looked up while they run', async () => {
    // Reads of the pool the ORM shares hold every one of its connections, whoever they are for.
    const { orm } = stack.app.services.deps;
    const heldEnded = endedAt(
      Array.from({ length: HEAVY_READS }, () =>
        orm.em.fork().getConnection().execute(`SELECT pg_sleep(${HOLD_SECONDS})`),
      ),
    );
    // A key no tenant has: failures are never cached, so its lookup always reaches the database.
    const answer = await graphql(stack.app.url, {
      apiKey: `sk_test_${'x'.repeat(40)}`,
      query: '{ balances { currency } }',
    });
    const answeredAt = Date.now();
    expect(answer.status).toBe(401);
    expect((await heldEnded) - answeredAt).toBeGreaterThan(LONG_BEFORE_MS);
  });
});
