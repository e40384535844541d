import { describe, expect, it } from 'vitest';
import { withClient } from '../../dev/embedded-postgres/database-server.ts';
import { TABLE_RETENTION } from '../../migrations/table-retention.ts';
import { useTestDatabase } from '../support/test-database.ts';

/**
 * Issue 33: every table has a stated retention or is the books. The statement is
 * migrations/table-retention.ts; this holds it to the schema the migrations build, so a table
 * added without saying how it stays bounded fails here, and so does an entry for a table that
 * is gone.
 */
const database = useTestDatabase('table_retention');

describe('every table of the schema', () => {
  it('has a stated retention, or is the books', async () => {
    const { rows } = await withClient(database.url, (db) =>
      db.query<{ name: string }>(
        `SELECT c.relname AS name
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
          ORDER BY 1`,
      ),
    );
    const tables = rows.map((r) => r.name);
    // The schema was read: the tables every payment writes are among them.
    expect(tables).toEqual(expect.arrayContaining(['payments', 'idempotency_keys']));
    const unstated = tables.filter((table) => !(table in TABLE_RETENTION));
    expect(unstated, 'tables with no entry in migrations/table-retention.ts').toEqual([]);
    const gone = Object.keys(TABLE_RETENTION).filter((table) => !tables.includes(table));
    expect(gone, 'entries in migrations/table-retention.ts for no table').toEqual([]);
  });
});
