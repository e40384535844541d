import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { withClient } from '../../dev/embedded-postgres/database-server.ts';
import { migrateDatabase } from '../../migrations/migrate.ts';
import { useEmptyDatabases, type TestDatabase } from '../support/test-database.ts';

/**
 * Migration 0024 (ADR 0058) turns each posting's two ledger lines into the posting's own entry
 * and drops the lines. Books written before it must read the same after it, and books it cannot
 * read as one debit and one credit of one amount must stop it, whole, rather than be guessed at.
 */
const BEFORE = '0023-provider-keys-hashed';
const TENANT = '6a7c1f7e-0000-4000-8000-000000000001';
const PAYMENT = '01a24c06-0000-7000-8000-000000000001';

const createEmptyDatabase = useEmptyDatabases();

/** A database at the schema before 0024, holding `lines` under the postings they name. */
async function booksBefore0024(
  label: string,
  postings: Array<{
    id: string;
    kind: 'capture' | 'refund';
    lines: Array<[string, number, number]>;
  }>,
): Promise<TestDatabase> {
  const database = await createEmptyDatabase(label);
  await migrateDatabase(database.url, { to: BEFORE });
  await withClient(database.url, async (db) => {
    await db.query('BEGIN');
    for (const posting of postings) {
      await db.query(
        `INSERT INTO ledger_postings (tenant_id, id, payment_id, kind, currency)
         VALUES ($1, $2, $3, $4, 'EUR')`,
        [TENANT, posting.id, PAYMENT, posting.kind],
      );
      for (const [index, [account, debit, credit]] of posting.lines.entries()) {
        await db.query(
          `INSERT INTO ledger_lines
                  (tenant_id, posting_id, line, account, debit_minor, credit_minor, currency)
           VALUES ($1, $2, $3, $4, $5, $6, 'EUR')`,
          [TENANT, posting.id, index + 1, account, debit, credit],
        );
      }
    }
    await db.query('COMMIT');
  });
  return database;
}

const tableExists = (db: pg.Client, name: string) =>
  db
    .query<{ found: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS found`, [name])
    .then(({ rows }) => rows[0]!.found);

describe('migration 0024: postings carry their entry', () => {
  it('turns each posting’s two lines into its entry, and drops the lines', async () => {
    const { url } = await booksBefore0024('ledger_conversion', [
      {
        id: `ledger_payment_${PAYMENT}_capture`,
        kind: 'capture',
        lines: [
          ['psp_clearing', 2500, 0],
          ['merchant_balance', 0, 2500],
        ],
      },
      {
        id: 'ledger_refund_0b7e0c52-0000-4000-8000-000000000002',
        kind: 'refund',
        // Lines in the other order: the line numbers say nothing about the sides.
        lines: [
          ['psp_clearing', 0, 700],
          ['merchant_balance', 700, 0],
        ],
      },
    ]);
    await migrateDatabase(url);
    await withClient(url, async (db) => {
      const { rows } = await db.query(
        `SELECT id, kind, debit_account, credit_account, amount_minor::text AS amount_minor
           FROM ledger_postings ORDER BY id`,
      );
      expect(rows).toEqual([
        {
          id: `ledger_payment_${PAYMENT}_capture`,
          kind: 'capture',
          debit_account: 'psp_clearing',
          credit_account: 'merchant_balance',
          amount_minor: '2500',
        },
        {
          id: 'ledger_refund_0b7e0c52-0000-4000-8000-000000000002',
          kind: 'refund',
          debit_account: 'merchant_balance',
          credit_account: 'psp_clearing',
          amount_minor: '700',
        },
      ]);
      expect(await tableExists(db, 'ledger_lines')).toBe(false);
    });
  });

  it.each([
    {
      books: 'a posting split over three lines',
      lines: [
        ['psp_clearing', 100, 0],
        ['merchant_balance', 0, 60],
        ['merchant_balance', 0, 40],
      ] as Array<[string, number, number]>,
    },
    {
      // Balanced, and holding a debit and a credit of one amount: a pair the conversion could
      // take while the other two lines (a fee) vanished from the books.
      books: 'a posting of four lines',
      lines: [
        ['psp_clearing', 100, 0],
        ['merchant_balance', 0, 100],
        ['fees', 30, 0],
        ['merchant_balance', 0, 30],
      ] as Array<[string, number, number]>,
    },
    {
      books: 'a posting whose two lines name one account',
      lines: [
        ['merchant_balance', 100, 0],
        ['merchant_balance', 0, 100],
      ] as Array<[string, number, number]>,
    },
    { books: 'a posting with no lines', lines: [] as Array<[string, number, number]> },
  ])('refuses books with $books, and changes nothing', async ({ lines }) => {
    const id = `ledger_payment_${PAYMENT}_capture`;
    const { url } = await booksBefore0024('ledger_conversion_refused', [
      { id, kind: 'capture', lines },
    ]);
    await expect(migrateDatabase(url)).rejects.toThrow(
      `ledger posting ${id} is not one debit and one credit of one amount`,
    );
    await withClient(url, async (db) => {
      expect(await tableExists(db, 'ledger_lines')).toBe(true);
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ledger_lines WHERE posting_id = $1`,
        [id],
      );
      expect(rows).toEqual([{ n: lines.length }]);
      const { rows: columns } = await db.query(
        `SELECT 1 FROM information_schema.columns
          WHERE table_name = 'ledger_postings' AND column_name = 'amount_minor'`,
      );
      expect(columns).toEqual([]);
    });
  });
});
