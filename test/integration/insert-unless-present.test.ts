import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertUnlessPresent } from '../../lib/db/insert-unless-present.ts';
import { postMovements, type Movement } from '../../services/ledger/post-movements.ts';
import { INSERT_RECEIPTS } from '../../services/notifications/notifications.sql.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';

/**
 * The consumers' idempotent inserts skip what is present by a probe instead of ON CONFLICT
 * (ADR 0066). What a probe cannot see is a copy another transaction has inserted and not yet
 * committed: these tests hold one open, start the insert, and commit it while the insert waits,
 * which is the race a lapsed lease makes between two dispatchers taking the same event.
 */
const database = useTestDatabase('insert-unless-present');
let pool: pg.Pool;
let rival: pg.Client;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: database.url, max: 4 });
  rival = new pg.Client({ connectionString: database.url });
  await rival.connect();
});

afterAll(async () => {
  await rival.end();
  await pool.end();
});

/** Until a backend other than the rival's waits for a lock: the insert has met the rival's row. */
async function untilBlockedByRival(): Promise<void> {
  const { rows } = await rival.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  await waitUntil(
    async () => {
      // From the pool: the rival is inside its transaction, which sees one snapshot of the view.
      const waiting = await pool.query(
        `SELECT 1 FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1`,
        [rows[0]!.pid],
      );
      return waiting.rowCount === 1;
    },
    { timeoutMs: 10_000, what: "the insert to wait for the rival's row" },
  );
}

function movement(): Movement {
  const paymentId = randomUUID();
  return {
    tenantId: randomUUID(),
    postingId: `ledger_payment_${paymentId}_capture`,
    paymentId,
    kind: 'capture',
    currency: 'EUR',
    amountMinor: '900',
  };
}

/** INSERT_RECEIPTS's arrays for one new receipt. */
function receipt(): unknown[] {
  const paymentId = randomUUID();
  return [[randomUUID()], [`receipt_payment_${paymentId}`], [paymentId], [`evt_${paymentId}`]];
}

describe('a ledger posting racing another of the same movement', () => {
  it('waits for it, posts nothing, and fails nothing', async () => {
    const m = movement();
    await rival.query('BEGIN');
    expect(await postMovements(rival, [m])).toHaveLength(1);
    const racing = postMovements(pool, [m]);
    await untilBlockedByRival();
    await rival.query('COMMIT');
    // Without the second spelling, this rejects with the primary key's unique violation.
    expect(await racing).toEqual([]);
    const { rows } = await pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM ledger_postings WHERE tenant_id = $1 AND id = $2',
      [m.tenantId, m.postingId],
    );
    expect(rows[0]!.n).toBe(1);
  });

  it('posts the others of its call that nobody raced', async () => {
    const [raced, other] = [movement(), movement()];
    await rival.query('BEGIN');
    await postMovements(rival, [raced]);
    const racing = postMovements(pool, [raced, other]);
    await untilBlockedByRival();
    await rival.query('COMMIT');
    expect(await racing).toEqual([{ postingId: other.postingId, kind: 'capture' }]);
  });

  it('posts a movement once when it is posted again later, and twice in one call', async () => {
    const m = movement();
    expect(await postMovements(pool, [m, m])).toHaveLength(1);
    expect(await postMovements(pool, [m])).toEqual([]);
  });
});

describe('a receipt racing another delivery of the same payment', () => {
  it('waits for it and writes nothing, without an error', async () => {
    const values = receipt();
    await rival.query('BEGIN');
    await insertUnlessPresent(rival, INSERT_RECEIPTS, values);
    const racing = insertUnlessPresent(pool, INSERT_RECEIPTS, values);
    await untilBlockedByRival();
    await rival.query('COMMIT');
    expect((await racing).rowCount).toBe(0);
  });

  it('is written once when delivered again later', async () => {
    const values = receipt();
    expect((await insertUnlessPresent(pool, INSERT_RECEIPTS, values)).rowCount).toBe(1);
    expect((await insertUnlessPresent(pool, INSERT_RECEIPTS, values)).rowCount).toBe(0);
  });
});

describe('what the consumers write', () => {
  it('has no confirmation records: the first posting and receipt are not speculative', async () => {
    await pool.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    const from = await pool.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn() AS lsn');
    await postMovements(pool, [movement()]);
    await insertUnlessPresent(pool, INSERT_RECEIPTS, receipt());
    // Records of this database's two tables only: other test files write WAL meanwhile.
    const { rows } = await pool.query<{ relname: string; record_type: string }>(
      `SELECT c.relname, w.record_type
         FROM pg_get_wal_records_info($1, pg_current_wal_flush_lsn()) w
         JOIN pg_class c
           ON w.block_ref LIKE '%rel 1663/' || (SELECT oid FROM pg_database
                                                 WHERE datname = current_database())
                               || '/' || pg_relation_filenode(c.oid) || ' %'
        WHERE c.relname IN ('ledger_postings', 'receipts') AND w.resource_manager = 'Heap'`,
      [from.rows[0]!.lsn],
    );
    const kinds = rows.map((r) => `${r.relname} ${r.record_type.replace('+INIT', '')}`).sort();
    expect(kinds).toEqual(['ledger_postings INSERT', 'receipts INSERT']);
  });
});

describe('a unique violation of another constraint', () => {
  it('is the caller’s error, not skipped', async () => {
    const insert = { ...INSERT_RECEIPTS, constraint: 'no_such_constraint' };
    const values = receipt();
    await rival.query('BEGIN');
    await insertUnlessPresent(rival, INSERT_RECEIPTS, values);
    const racing = insertUnlessPresent(pool, insert, values);
    const refused = expect(racing).rejects.toMatchObject({ code: '23505' });
    await untilBlockedByRival();
    await rival.query('COMMIT');
    await refused;
  });
});
