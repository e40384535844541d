import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { providerKeyTaken } from '../../services/payments/provider-key-holder.ts';
import {
  INSERT_PAYMENT,
  SELECT_PAYMENT_BY_PROVIDER_KEY,
} from '../../services/payments/payments.sql.ts';
import { useTestStack } from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';

const stack = useTestStack('provider-key-uniqueness');

function insertPayment(tenantId: string, providerKey: string): unknown[] {
  return [
    tenantId,
    randomUUID(),
    1000,
    'EUR',
    'pm_card_visa',
    'AUTOMATIC',
    null,
    null,
    null,
    providerKey,
  ];
}

function errorOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => null,
    (error: unknown) => error,
  );
}

/**
 * A provider key is held by one payment (or one operation) at most: a second charge under it
 * would be answered by the provider from its memory of the first. The database enforces it with
 * an exclusion constraint on a hash index (migrations/0023, ADR 0055), which must behave as the
 * unique index it replaced: it refuses a committed key, makes a concurrent insert of the same key
 * wait for the first to end, and fails with the error the holder check (provider-key-holder.ts)
 * recognises, so that the request is answered instead of failing.
 */
describe('provider-key uniqueness', () => {
  it('refuses a key a committed payment holds, in any tenant, as a taken provider key', async () => {
    const key = `provider_payment_${randomUUID()}`;
    await stack.db.query(INSERT_PAYMENT, insertPayment(stack.tenantIds.a, key));
    for (const tenant of [stack.tenantIds.a, stack.tenantIds.b]) {
      const error = await errorOf(stack.db.query(INSERT_PAYMENT, insertPayment(tenant, key)));
      expect(error).toMatchObject({ constraint: 'payments_provider_key_uq' });
      expect(providerKeyTaken(error)).toBe(true);
    }
  });

  it('makes a concurrent insert wait for the first: refused if it commits, let in if not', async () => {
    for (const end of ['COMMIT', 'ROLLBACK'] as const) {
      const key = `provider_payment_${randomUUID()}`;
      const first = await stack.db.connect();
      const second = await stack.db.connect();
      try {
        await first.query('BEGIN');
        await first.query(INSERT_PAYMENT, insertPayment(stack.tenantIds.a, key));
        const secondPid = (await second.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))
          .rows[0]!.pid;
        const inserted = errorOf(
          second.query(INSERT_PAYMENT, insertPayment(stack.tenantIds.a, key)),
        );
        await waitUntil(
          async () => {
            const { rows } = await stack.db.query<{ wait: string | null }>(
              'SELECT wait_event_type AS wait FROM pg_stat_activity WHERE pid = $1',
              [secondPid],
            );
            return rows[0]?.wait === 'Lock';
          },
          { timeoutMs: 10_000, what: 'the second insert to wait for the first' },
        );
        await first.query(end);
        const error = await inserted;
        expect({ end, taken: providerKeyTaken(error) }).toEqual({ end, taken: end === 'COMMIT' });
        if (end === 'ROLLBACK') expect(error).toBeNull();
      } finally {
        await first.query('ROLLBACK');
        first.release();
        second.release();
      }
      const { rows } = await stack.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM payments WHERE provider_key = $1',
        [key],
      );
      expect({ end, holders: rows[0]!.n }).toEqual({ end, holders: 1 });
    }
  });

  it('refuses a key an operation holds', async () => {
    const payment = randomUUID();
    await stack.db.query(INSERT_PAYMENT, [
      ...insertPayment(stack.tenantIds.a, `provider_payment_${payment}`).slice(0, 1),
      payment,
      ...insertPayment(stack.tenantIds.a, `provider_payment_${payment}`).slice(2),
    ]);
    const key = `provider_refund_${randomUUID()}`;
    const insert = () =>
      stack.db.query(
        `INSERT INTO payment_operations (tenant_id, id, payment_id, kind, amount_minor, status, provider_key)
         VALUES ($1, gen_random_uuid(), $2, 'refund', 100, 'PROCESSING', $3)`,
        [stack.tenantIds.a, payment, key],
      );
    await insert();
    await expect(insert()).rejects.toMatchObject({
      code: '23P01',
      constraint: 'payment_operations_provider_key_uq',
    });
  });

  it('finds the holder of a key through the index, not by reading the table', async () => {
    const client = await stack.db.connect();
    try {
      await client.query('BEGIN');
      // The test's table is small enough that a sequential scan would win on cost; this asks
      // whether the index can serve the lookup at all, as it must on a table of millions.
      await client.query('SET LOCAL enable_seqscan = off');
      // provider-key-holder.ts's parameters: tenant, provider key, window, operation ids, key.
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN ${SELECT_PAYMENT_BY_PROVIDER_KEY}`,
        [stack.tenantIds.a, 'provider_payment_x', 86_400, ['payments.create.v1'], 'k'],
      );
      const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/payments_provider_key_uq/);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});
