import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  CLAIM_STALE_KEYS,
  TAKE_OVER_KEY,
} from '../../lib/idempotency/idempotency.sql.ts';
import { useTestDatabase } from '../support/test-database.ts';

/**
 * The two statements that hand a request to a new owner, exercised directly so each condition
 * is proven on its own: only an expired lease, only the token the taker saw, and sweepers that
 * skip each other's rows instead of waiting for them.
 */
const database = useTestDatabase('claims');
let db: pg.Pool;
const TENANT = '00000000-0000-4000-8000-00000000000a';
const OPERATION = 'payments.create.v1';
const LEASE_MS = 60_000;

beforeAll(() => {
  db = new pg.Pool({ connectionString: database.url, max: 4 });
});
afterAll(async () => {
  await db?.end();
});
beforeEach(async () => {
  await db.query('TRUNCATE idempotency_keys');
});

async function seed(key: string, row: { token: number; leaseMs: number }): Promise<void> {
  await db.query(
    `INSERT INTO idempotency_keys (tenant_id, operation, key, request_hash, state, recovery_point, fencing_token,
                                   lease_expires_at, expires_at)
     VALUES ($1, $2, $3, '\\x00', 'started', 'provider_charge_sent', $4,
             now() + make_interval(secs => $5::float8 / 1000), now() + interval '1 day')`,
    [TENANT, OPERATION, key, row.token, row.leaseMs],
  );
}

async function tokenOf(key: string): Promise<string | undefined> {
  const { rows } = await db.query<{ fencing_token: string }>(
    'SELECT fencing_token FROM idempotency_keys WHERE key = $1',
    [key],
  );
  return rows[0]?.fencing_token;
}

describe('takeover by a client retry (TAKE_OVER_KEY)', () => {
  it('wins only on an expired lease at the token the taker saw, and bumps the token', async () => {
    await seed('live', { token: 1, leaseMs: 60_000 });
    await seed('expired', { token: 2, leaseMs: -1_000 });
    const take = (key: string, seen: number) =>
      db.query(TAKE_OVER_KEY, [TENANT, OPERATION, key, seen, LEASE_MS]);

    expect((await take('live', 1)).rowCount).toBe(0); // the owner is alive
    expect(await tokenOf('live')).toBe('1');
    expect((await take('expired', 1)).rowCount).toBe(0); // someone took it over since we looked
    expect(await tokenOf('expired')).toBe('2');
    expect((await take('expired', 2)).rows[0]).toMatchObject({
      fencing_token: '3',
      recovery_point: 'provider_charge_sent',
    });
    expect((await take('expired', 2)).rowCount).toBe(0); // and only once: the lease is live again
  });
});

describe('the recovery worker’s claim (CLAIM_STALE_KEYS)', () => {
  it('takes only expired leases, and a second sweeper skips rows the first holds instead of waiting', async () => {
    for (let i = 0; i < 6; i++) await seed(`stale-${i}`, { token: 1, leaseMs: -1_000 });
    await seed('live', { token: 1, leaseMs: 60_000 });

    const first = await db.connect();
    const second = await db.connect();
    try {
      await first.query('BEGIN');
      const firstClaim = await first.query<{ key: string }>(CLAIM_STALE_KEYS, [
        LEASE_MS,
        3,
        [OPERATION],
      ]);
      expect(firstClaim.rowCount).toBe(3);

      // Were the first sweeper's rows waited on, this would fail on the lock timeout.
      await second.query(`SET lock_timeout = '500ms'`);
      const secondClaim = await second.query<{ key: string }>(CLAIM_STALE_KEYS, [
        LEASE_MS,
        10,
        [OPERATION],
      ]);
      const firstKeys = firstClaim.rows.map((r) => r.key);
      const secondKeys = secondClaim.rows.map((r) => r.key);
      expect(secondKeys).toHaveLength(3);
      expect(secondKeys.some((k) => firstKeys.includes(k))).toBe(false);
      expect(secondKeys).not.toContain('live');
      await first.query('COMMIT');
    } finally {
      first.release();
      second.release();
    }
    const { rows } = await db.query<{ key: string; fencing_token: string }>(
      'SELECT key, fencing_token FROM idempotency_keys ORDER BY key',
    );
    expect(rows.filter((r) => r.key !== 'live').every((r) => r.fencing_token === '2')).toBe(true);
    expect(rows.find((r) => r.key === 'live')?.fencing_token).toBe('1');
    expect((await db.query(CLAIM_STALE_KEYS, [LEASE_MS, 10, [OPERATION]])).rowCount).toBe(0);
  });
});
