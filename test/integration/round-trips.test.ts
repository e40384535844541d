import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { graphql, paymentOf } from '../support/graphql-client.ts';
import { CREATE_PAYMENT } from '../support/operations.ts';
import { TENANT_A, useTestStack } from '../support/test-stack.ts';

/**
 * What a createPayment costs in round trips to PostgreSQL, counted where PostgreSQL ends each
 * one (a ReadyForQuery) on every connection of the gateway's pool. Round trips are most of a
 * payment's database cost on the hot path (see
 * docs/decisions/0006-pipelined-statements-on-pg-internals.md); these pin the count, so a change
 * that adds one fails here rather than only in a benchmark.
 */
const stack = useTestStack('round-trips');
let roundTrips = 0;

beforeAll(() => {
  const counted = new WeakSet<pg.PoolClient>();
  stack.app.services.deps.pool.on('acquire', (client) => {
    if (counted.has(client)) return;
    counted.add(client);
    const { connection } = client as unknown as { connection: pg.Connection };
    connection.on('readyForQuery', () => roundTrips++);
  });
});

async function create(key: string) {
  return graphql(stack.app.url, {
    apiKey: TENANT_A.apiKey,
    query: CREATE_PAYMENT,
    variables: {
      input: {
        idempotencyKey: key,
        amount: '12.00',
        currency: 'EUR',
        paymentMethod: 'pm_card_visa',
        reference: key,
      },
    },
  });
}

async function counted(run: () => Promise<unknown>): Promise<number> {
  const before = roundTrips;
  await run();
  return roundTrips - before;
}

describe('createPayment', () => {
  beforeAll(async () => {
    await create('warm-up'); // authenticates the tenant once; later requests use the cache
  });

  it('makes three round trips for a new payment: the read, then each transaction in one', async () => {
    let status = '';
    const trips = await counted(async () => {
      status = paymentOf(await create('round-trips-new')).status;
    });
    expect(status).toBe('SUCCEEDED');
    // BEGIN, the scope lock, the key, the payment row and COMMIT; then, after the provider
    // call, BEGIN, the fence with the answer, the outcome, its event and COMMIT.
    expect(trips).toBe(3);
  });

  it('makes one round trip for a replay', async () => {
    await create('round-trips-replay');
    const trips = await counted(() => create('round-trips-replay'));
    expect(trips).toBe(1);
  });
});
