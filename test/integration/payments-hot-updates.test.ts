import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, withTransaction } from '../../lib/db/pool.ts';
import { INSERT_PAYMENT, RECORD_CHARGE_OUTCOME } from '../../services/payments/payments.sql.ts';
import { useTestDatabase } from '../support/test-database.ts';

/**
 * A payment is inserted PROCESSING and updated moments later with the provider's answer. That
 * update touches no indexed column, so it can be heap-only (HOT: no index entry written), but
 * only if the new row version fits on the old one's page. migrations/0008 leaves room for it.
 * Packed pages (fillfactor 100) made every such update write an entry into all four indexes.
 */
const database = useTestDatabase('payments-hot-updates');
const TENANT = randomUUID();
/** Enough rows that the first page is as full as inserts will make it. */
const ROWS = 200;
let pool: pg.Pool;

beforeAll(async () => {
  pool = createPool({ connectionString: database.url, max: 2, applicationName: 'hot-test' });
  await pool.query(`INSERT INTO tenants (id, name, api_key_hash) VALUES ($1, 'hot', '\\x01')`, [
    TENANT,
  ]);
  for (let i = 0; i < ROWS; i++) {
    await pool.query(INSERT_PAYMENT, [
      TENANT,
      randomUUID(),
      '1050',
      'EUR',
      'pm_card_visa',
      'AUTOMATIC',
      `order-${i}`,
      'a description of the kind merchants send',
      JSON.stringify({ orderId: `order-${i}`, channel: 'web' }),
      `pk_${randomUUID()}`,
    ]);
  }
});
afterAll(async () => {
  await pool?.end();
});

describe('payments pages', () => {
  it("keep room for the provider's answer: recording it on a packed page is a HOT update", async () => {
    const hot = await withTransaction(pool, async (tx) => {
      const firstPage = await tx.query<{ id: string }>(
        `SELECT id FROM payments WHERE tenant_id = $1 AND (ctid::text::point)[0] = 0 LIMIT 3`,
        [TENANT],
      );
      expect(firstPage.rows).toHaveLength(3);
      for (const { id } of firstPage.rows) {
        // Fails its statement unless the payment was PROCESSING and is now updated.
        const outcome = ['SUCCEEDED', '1050', `ch_${id}`, null, new Date()];
        await tx.query(RECORD_CHARGE_OUTCOME, [TENANT, id, ...outcome]);
      }
      const counted = await tx.query<{ hot: string }>(
        `SELECT pg_stat_get_xact_tuples_hot_updated('payments'::regclass) AS hot`,
      );
      return Number(counted.rows[0]?.hot);
    });
    expect(hot).toBe(3);
  });
});
