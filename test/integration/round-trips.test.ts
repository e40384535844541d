import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { graphql, paymentOf } from '../support/graphql-client.ts';
import { CREATE_PAYMENT } from '../support/operations.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { TENANT_A, useTestStackOn, type TestStack } from '../support/test-stack.ts';

/**
 * What a createPayment costs in round trips to PostgreSQL, counted where PostgreSQL ends each
 * one (a ReadyForQuery) on every connection of the gateway's pool. Round trips are most of a
 * payment's database cost on the hot path (see
 * docs/decisions/0006-pipelined-statements-on-pg-internals.md); these pin the count, so a change
 * that adds one fails here rather than only in a benchmark. Two gateway processes share the
 * database: a retry may come back to the one that admitted its key, or reach the other.
 */
const database = useTestDatabase('round-trips');
const stack = useTestStackOn(database);
const other = useTestStackOn(database);
const roundTrips = new Map<TestStack, number>();

function countRoundTrips(of: TestStack): void {
  const counted = new WeakSet<pg.PoolClient>();
  roundTrips.set(of, 0);
  of.app.services.deps.pool.on('acquire', (client) => {
    if (counted.has(client)) return;
    counted.add(client);
    const { connection } = client as unknown as { connection: pg.Connection };
    connection.on('readyForQuery', () => roundTrips.set(of, roundTrips.get(of)! + 1));
  });
}

beforeAll(() => {
  countRoundTrips(stack);
  countRoundTrips(other);
});

async function create(key: string, to: TestStack = stack) {
  return graphql(to.app.url, {
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

/** Round trips `to`'s pool made while `run` ran. */
async function counted(run: () => Promise<unknown>, to: TestStack = stack): Promise<number> {
  const before = roundTrips.get(to)!;
  await run();
  return roundTrips.get(to)! - before;
}

describe('createPayment', () => {
  beforeAll(async () => {
    // Each gateway authenticates the tenant once; later requests use its cache.
    await create('warm-up');
    await create('warm-up', other);
  });

  it('makes two round trips for a new payment: one per transaction, with no read before', async () => {
    let status = '';
    const trips = await counted(async () => {
      status = paymentOf(await create('round-trips-new')).status;
    });
    expect(status).toBe('SUCCEEDED');
    // The scope lock, the key, the payment row, committed; then, after the provider call, the
    // fence with the answer, the outcome and its event, committed.
    expect(trips).toBe(2);
  });

  it('makes one round trip for a replay that comes back to the gateway that admitted its key', async () => {
    await create('round-trips-replay');
    let replayed: unknown;
    const trips = await counted(async () => {
      replayed = (await create('round-trips-replay')).body;
    });
    expect(replayed).toMatchObject({ extensions: { idempotency: { replayed: true } } });
    expect(trips).toBe(1);
  });

  it('makes two round trips for a replay another gateway admitted, then one', async () => {
    const first = paymentOf(await create('round-trips-elsewhere'));
    // This gateway has not met the key: its insert finds the key taken, then it reads.
    let answer: Awaited<ReturnType<typeof create>> | undefined;
    const trips = await counted(async () => {
      answer = await create('round-trips-elsewhere', other);
    }, other);
    expect(paymentOf(answer!).id).toBe(first.id);
    expect(answer!.body).toMatchObject({ extensions: { idempotency: { replayed: true } } });
    expect(trips).toBe(2);
    // Now it has.
    expect(await counted(() => create('round-trips-elsewhere', other), other)).toBe(1);
  });
});
