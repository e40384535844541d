import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { withClient } from '../../dev/embedded-postgres/database-server.ts';
import { migrateDatabase } from '../../migrations/migrate.ts';
import * as paymentStatements from '../../services/payments/payments.sql.ts';
import { useEmptyDatabases } from '../support/test-database.ts';

/**
 * Migration 0025 (ADR 0059) puts the columns a payment's updates change after those set once,
 * so that an update on the same page logs only its changed tail. The layout must hold for every
 * UPDATE the payments service sends, and the rebuild must keep every row and the foreign key
 * that points at the table.
 */
const BEFORE = '0024-postings-carry-their-entry';
const TENANT = '6a7c1f7e-0000-4000-8000-000000000002';
const PAYMENT = '01a24c06-0000-7000-8000-000000000002';

const createEmptyDatabase = useEmptyDatabases();

/** The columns each `UPDATE payments … SET … WHERE` among the service's statements assigns. */
function columnsTheUpdatesSet(): Set<string> {
  const set = new Set<string>();
  for (const text of Object.values(paymentStatements)) {
    if (typeof text !== 'string') continue;
    for (const [, assignments] of text.matchAll(/UPDATE payments\s+SET\s+([\s\S]*?)\s+WHERE\b/g)) {
      for (const [, column] of assignments!.matchAll(/(?:^|,)\s*(\w+)\s*=/g)) set.add(column!);
    }
  }
  return set;
}

describe('migration 0025: the columns updates change come last', () => {
  it('every column an update of payments sets comes after every column none sets', async () => {
    const database = await createEmptyDatabase('payments_column_order');
    await migrateDatabase(database.url);
    const changing = columnsTheUpdatesSet();
    // The statements were found: the provider's answer, settlement, refunds, the guard.
    expect([...changing].sort()).toEqual(
      expect.arrayContaining([
        'amount_captured_minor',
        'amount_refunded_minor',
        'failure_code',
        'guarded_reference',
        'provider_reference',
        'status',
        'updated_at',
        'version',
      ]),
    );
    const { rows } = await withClient(database.url, (db) =>
      db.query<{ name: string }>(
        `SELECT attname AS name FROM pg_attribute
          WHERE attrelid = 'payments'::regclass AND attnum > 0 AND NOT attisdropped
          ORDER BY attnum`,
      ),
    );
    const order = rows.map((r) => r.name);
    const firstChanging = order.findIndex((c) => changing.has(c));
    const setOnceAfter = order.slice(firstChanging).filter((c) => !changing.has(c));
    expect(setOnceAfter, `column order: ${order.join(', ')}`).toEqual([]);
  });

  it('keeps every payment as it was, the fillfactor, and the operations’ foreign key', async () => {
    const database = await createEmptyDatabase('payments_rebuild');
    await migrateDatabase(database.url, { to: BEFORE });
    const columns = `tenant_id, id, status, amount_minor, currency, amount_captured_minor,
      amount_refunded_minor, payment_method, capture_method, reference, description, metadata,
      provider_key, provider_reference, failure_code, created_at, updated_at, guarded_reference,
      version`;
    const read = (db: pg.Client) =>
      db
        .query<Record<string, unknown>>(`SELECT ${columns} FROM payments ORDER BY id`)
        .then(({ rows }) => rows);
    const before = await withClient(database.url, async (db) => {
      await db.query(
        `INSERT INTO payments (${columns}) VALUES
           ($1, $2, 'SUCCEEDED', 2500, 'EUR', 2500, 700, 'pm_card_visa', 'AUTOMATIC', 'order-1',
            'two books', '{"sku": "b-1"}', 'pk_synthetic_1', 'ch_synthetic_1', NULL,
            '2026-12-01T10:00:00Z', '2026-12-01T10:00:01Z', 'order-1', 3),
           ($1, '01a24c06-0000-7000-8000-000000000003', 'FAILED', 900, 'USD', 0, 0,
            'pm_card_declined', 'MANUAL', NULL, NULL, NULL, 'pk_synthetic_2', NULL,
            'card_declined', '2026-12-01T11:00:00Z', '2026-12-01T11:00:02Z', NULL, 2)`,
        [TENANT, PAYMENT],
      );
      await db.query(
        `INSERT INTO payment_operations
                (tenant_id, id, payment_id, kind, amount_minor, status, provider_key)
         VALUES ($1, gen_random_uuid(), $2, 'refund', 700, 'SUCCEEDED', 'pk_synthetic_3')`,
        [TENANT, PAYMENT],
      );
      return read(db);
    });

    await migrateDatabase(database.url);

    await withClient(database.url, async (db) => {
      expect(await read(db)).toEqual(before);
      const { rows } = await db.query<{ options: string[] | null }>(
        `SELECT reloptions AS options FROM pg_class WHERE oid = 'payments'::regclass`,
      );
      expect(rows[0]!.options).toEqual(['fillfactor=80']);
      await expect(
        db.query(
          `INSERT INTO payment_operations
                  (tenant_id, id, payment_id, kind, status, provider_key)
           VALUES ($1, gen_random_uuid(), gen_random_uuid(), 'cancel', 'PROCESSING', 'pk_4')`,
          [TENANT],
        ),
      ).rejects.toMatchObject({ code: '23503', constraint: 'payment_operations_payment_fk' });
    });
  });
});
