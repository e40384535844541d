import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, withTransaction } from '../../lib/db/pool.ts';
import { DEFAULT_CLAIM_LEASE_MS, BATCH_SIZE } from '../../lib/outbox/dispatcher.ts';
import { writeEvent } from '../../lib/outbox/outbox.ts';
import { CLAIM_DUE_DELIVERIES } from '../../lib/outbox/outbox.sql.ts';
import { useTestDatabase } from '../support/test-database.ts';

/**
 * A claim sets each delivery's lease in a column no index holds, on pages that keep room for the
 * new row version (migrations/0015), so it is a heap-only (HOT) update: no new entry in the
 * primary key or the due index for any delivery it takes. When the lease moved next_attempt_at,
 * or on packed pages, every claimed delivery wrote both.
 */
const database = useTestDatabase('outbox-claims');
const TENANT = randomUUID();
/** Events enough to fill several pages, as a burst of payments does. */
const EVENTS = 200;
let pool: pg.Pool;

beforeAll(async () => {
  pool = createPool({ connectionString: database.url, max: 2, applicationName: 'claims-test' });
  for (let i = 0; i < EVENTS; i++) {
    const paymentId = randomUUID();
    await writeEvent(pool, {
      tenantId: TENANT,
      id: `evt_payment_${paymentId}_succeeded`,
      type: 'payment.succeeded',
      payload: { payment: { id: paymentId } },
      // A consumer without a cursor: each event gets a delivery row (the ledger and receipts
      // read the log instead, migrations/0016).
      consumers: ['webhooks'],
    });
  }
});
afterAll(async () => {
  await pool?.end();
});

describe('a claim of due deliveries', () => {
  it('updates each one it takes heap-only, writing no index entry', async () => {
    const { claimed, hot } = await withTransaction(pool, async (tx) => {
      const claim = await tx.query(CLAIM_DUE_DELIVERIES, [DEFAULT_CLAIM_LEASE_MS, BATCH_SIZE]);
      const counted = await tx.query<{ hot: string }>(
        `SELECT pg_stat_get_xact_tuples_hot_updated('outbox_deliveries'::regclass) AS hot`,
      );
      return { claimed: claim.rowCount, hot: Number(counted.rows[0]?.hot) };
    });
    expect(claimed).toBe(BATCH_SIZE);
    expect(hot).toBe(BATCH_SIZE);
  });

  it('leaves what it took to its lease: the next claim takes others', async () => {
    const first = await pool.query<{ event_id: string; consumer: string }>(CLAIM_DUE_DELIVERIES, [
      DEFAULT_CLAIM_LEASE_MS,
      BATCH_SIZE,
    ]);
    const second = await pool.query<{ event_id: string; consumer: string }>(CLAIM_DUE_DELIVERIES, [
      DEFAULT_CLAIM_LEASE_MS,
      BATCH_SIZE,
    ]);
    const key = (r: { event_id: string; consumer: string }) => `${r.event_id}/${r.consumer}`;
    const taken = new Set(first.rows.map(key));
    expect(second.rows).toHaveLength(BATCH_SIZE);
    expect(second.rows.filter((r) => taken.has(key(r)))).toEqual([]);
  });
});
