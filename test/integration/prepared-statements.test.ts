import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, withTransaction } from '../../lib/db/pool.ts';
import { INSERT_KEY, SELECT_KEY } from '../../lib/idempotency/idempotency.sql.ts';
import { addPartition } from '../../lib/idempotency/retention.ts';
import { useTestDatabase } from '../support/test-database.ts';

/**
 * The pool prepares every parameterised statement once per connection (prepared-client.ts):
 * planning the partitioned idempotency lookups was most of a payment's PostgreSQL CPU. These
 * tests pin that statements are really prepared, that unparameterised text is not, and that a
 * prepared plan follows the partitions retention creates and drops.
 */
const database = useTestDatabase('prepared-statements');
let pool: pg.Pool;

beforeAll(() => {
  pool = createPool({ connectionString: database.url, max: 1, applicationName: 'prepared-test' });
});
afterAll(async () => {
  await pool?.end();
});

async function preparedOnConnection(client: pg.PoolClient): Promise<string[]> {
  // No parameters: sent as a simple query, so it does not add itself to the list.
  const { rows } = await client.query<{ statement: string }>(
    'SELECT statement FROM pg_prepared_statements ORDER BY prepare_time',
  );
  return rows.map((row) => row.statement);
}

/** This session's count of each plan kind its prepared statement `text` has used. */
async function plansOf(client: pg.PoolClient, text: string) {
  const { rows } = await client.query<{ generic_plans: string; custom_plans: string }>(
    'SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1',
    [text],
  );
  return { generic: Number(rows[0]?.generic_plans), custom: Number(rows[0]?.custom_plans) };
}

describe('the pool', () => {
  // Left to PostgreSQL (plan_cache_mode auto), a prepared statement is planned anew on each of
  // its first five runs, and on every run after them for as long as its generic plan is costed
  // dearer than a custom one, which the key lookup's is on a database of a million payments
  // (ADR 0047). Here the statistics are those of an empty database, so this pins the setting
  // that plans once for any table sizes: not one custom plan, from the first run.
  it('plans the key lookup once per connection, never for the values of one run', async () => {
    const client = await pool.connect();
    try {
      const tenant = '00000000-0000-4000-8000-00000000abce';
      for (let i = 0; i < 8; i++) {
        await client.query(SELECT_KEY, [tenant, ['create_payment'], `plan-${i}`]);
      }
      expect(await plansOf(client, SELECT_KEY)).toEqual({ generic: 8, custom: 0 });
    } finally {
      client.release();
    }
  });

  it('leaves planning to PostgreSQL on a pool that asks for it (maintenance)', async () => {
    const auto = createPool({
      connectionString: database.url,
      max: 1,
      applicationName: 'prepared-test-auto',
      planCacheMode: 'auto',
    });
    try {
      const client = await auto.connect();
      try {
        const tenant = '00000000-0000-4000-8000-00000000abcf';
        for (let i = 0; i < 3; i++) {
          await client.query(SELECT_KEY, [tenant, ['create_payment'], `auto-${i}`]);
        }
        expect(await plansOf(client, SELECT_KEY)).toEqual({ generic: 0, custom: 3 });
      } finally {
        client.release();
      }
    } finally {
      await auto.end();
    }
  });

  it('prepares a parameterised statement once per connection and reuses it', async () => {
    const client = await pool.connect();
    try {
      const text = 'SELECT $1::int + 1 AS n';
      expect((await client.query<{ n: number }>(text, [1])).rows[0]?.n).toBe(2);
      expect((await client.query<{ n: number }>(text, [41])).rows[0]?.n).toBe(42);
      const prepared = await preparedOnConnection(client);
      expect(prepared.filter((statement) => statement === text)).toHaveLength(1);
    } finally {
      client.release();
    }
  });

  it('sends unparameterised text unprepared, so several statements still run as one', async () => {
    const client = await pool.connect();
    try {
      await client.query('SELECT 1; SELECT 2');
      const prepared = await preparedOnConnection(client);
      expect(prepared.some((statement) => statement.includes('SELECT 2'))).toBe(false);
    } finally {
      client.release();
    }
  });

  it('follows partitions created and dropped after its plan was cached', async () => {
    const tenant = '00000000-0000-4000-8000-00000000abcd';
    const scope = [tenant, 'create_payment', 'k-1'];
    const [, operation, key] = scope;
    const lookup = async () =>
      (await pool.query<{ id: string }>(SELECT_KEY, [tenant, [operation], key])).rows;
    // More than five runs: PostgreSQL may switch a prepared statement to its generic plan.
    for (let i = 0; i < 8; i++) expect(await lookup()).toEqual([]);
    // Partitions far beyond any the migration made; a row admitted into them, with a window
    // that ends there, is visible to the cached lookup, and gone once they are dropped.
    const lower = new Date(Date.UTC(2099, 0, 1));
    const upper = new Date(Date.UTC(2099, 0, 2));
    const created: string[] = [];
    await withTransaction(pool, async (tx) => {
      for (const parent of ['idempotency_keys', 'idempotency_phase_log'] as const) {
        created.push(await addPartition(tx, { parent, lower, upper }));
      }
    });
    const ttlSeconds = Math.floor((lower.getTime() + 12 * 3_600_000 - Date.now()) / 1000);
    await withTransaction(pool, (tx) =>
      tx.query(INSERT_KEY, [
        ...scope,
        Buffer.alloc(32),
        'charge_pending',
        '00000000-0000-4000-8000-0000000000aa',
        1000,
        ttlSeconds,
        null, // a plain request hash, as rows admitted before keyed hashes
        [operation],
      ]),
    );
    expect(await lookup()).toHaveLength(1);
    for (const name of created) await pool.query(`DROP TABLE ${name}`);
    expect(await lookup()).toEqual([]);
  });
});
