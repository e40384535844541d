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

const RIVAL_POSTING = `
INSERT INTO ledger_postings
       (tenant_id, id, payment_id, kind, currency, debit_account, credit_account, amount_minor)
VALUES ($1, $2, $3, 'capture', $4, 'psp_clearing', 'merchant_balance', $5)`;

const RIVAL_RECEIPT = `INSERT INTO receipts (tenant_id, id, payment_id, event_id) VALUES ($1, $2, $3, $4)`;

/**
 * Starts `race` while the rival holds an uncommitted copy (`copy` with `values`), and commits the
 * copy once `race` waits for it. Whatever fails meanwhile, the rival's transaction is ended, and
 * the race's outcome is returned to be observed, never left unhandled.
 */
async function whileRivalHolds<T>(
  copy: string,
  values: unknown[],
  race: () => Promise<T>,
): Promise<{ racing: Promise<T> }> {
  await rival.query('BEGIN');
  let racing: Promise<T> | undefined;
  try {
    await rival.query(copy, values);
    racing = race();
    racing.catch(() => undefined);
    await untilBlockedByRival();
    await rival.query('COMMIT');
  } finally {
    // After the COMMIT this only warns that no transaction is open.
    await rival.query('ROLLBACK');
  }
  // Wrapped: an async function returning the promise itself would await it.
  return { racing };
}

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

/** RIVAL_POSTING's values for a movement. */
const postingOf = (m: Movement) => [
  m.tenantId,
  m.postingId,
  m.paymentId,
  m.currency,
  m.amountMinor,
];

/** A new receipt: RIVAL_RECEIPT's values, and the same as INSERT_RECEIPTS' arrays. */
function receipt(): { row: string[]; arrays: string[][] } {
  const paymentId = randomUUID();
  const row = [randomUUID(), `receipt_payment_${paymentId}`, paymentId, `evt_${paymentId}`];
  return { row, arrays: row.map((value) => [value]) };
}

describe('a ledger posting racing another of the same movement', () => {
  it('waits for it, posts nothing, and fails nothing', async () => {
    const m = movement();
    const { racing } = await whileRivalHolds(RIVAL_POSTING, postingOf(m), () =>
      postMovements(pool, [m]),
    );
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
    const { racing } = await whileRivalHolds(RIVAL_POSTING, postingOf(raced), () =>
      postMovements(pool, [raced, other]),
    );
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
    const { row, arrays } = receipt();
    const { racing } = await whileRivalHolds(RIVAL_RECEIPT, row, () =>
      insertUnlessPresent(pool, INSERT_RECEIPTS, arrays),
    );
    expect((await racing).rowCount).toBe(0);
  });

  it('is written once when delivered again later, and when one call carries it twice', async () => {
    const { arrays } = receipt();
    expect((await insertUnlessPresent(pool, INSERT_RECEIPTS, arrays)).rowCount).toBe(1);
    expect((await insertUnlessPresent(pool, INSERT_RECEIPTS, arrays)).rowCount).toBe(0);
    const twice = receipt().arrays.map((column) => [...column, ...column]);
    expect((await insertUnlessPresent(pool, INSERT_RECEIPTS, twice)).rowCount).toBe(1);
  });
});

describe('what the consumers write', () => {
  it('has no confirmation records: the first posting and receipt are not speculative', async () => {
    await pool.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    const lsn = async (fn: string) =>
      (await pool.query<{ lsn: string }>(`SELECT ${fn}() AS lsn`)).rows[0]!.lsn;
    const from = await lsn('pg_current_wal_insert_lsn');
    await postMovements(pool, [movement()]);
    await insertUnlessPresent(pool, INSERT_RECEIPTS, receipt().arrays);
    const to = await lsn('pg_current_wal_insert_lsn');
    // pg_walinspect reads only what is flushed, and a server with synchronous_commit off (the
    // embedded one) flushes a moment after the commit.
    await waitUntil(
      async () =>
        (
          await pool.query<{ ok: boolean }>(
            'SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS ok',
            [to],
          )
        ).rows[0]!.ok,
      { timeoutMs: 10_000, what: 'the WAL to be flushed past the two inserts' },
    );
    // Records of this database's two tables only: other test files write WAL meanwhile.
    const { rows } = await pool.query<{ relname: string; record_type: string }>(
      `SELECT c.relname, w.record_type
         FROM pg_get_wal_records_info($1, $2) w
         JOIN pg_class c
           ON w.block_ref LIKE '%rel 1663/' || (SELECT oid FROM pg_database
                                                 WHERE datname = current_database())
                               || '/' || pg_relation_filenode(c.oid) || ' %'
        WHERE c.relname IN ('ledger_postings', 'receipts') AND w.resource_manager = 'Heap'`,
      [from, to],
    );
    const kinds = rows.map((r) => `${r.relname} ${r.record_type.replace('+INIT', '')}`).sort();
    expect(kinds).toEqual(['ledger_postings INSERT', 'receipts INSERT']);
  });
});

describe('a unique violation of another constraint', () => {
  it('is the caller’s error, not skipped', async () => {
    const insert = { ...INSERT_RECEIPTS, constraint: 'no_such_constraint' };
    const { row, arrays } = receipt();
    const { racing } = await whileRivalHolds(RIVAL_RECEIPT, row, () =>
      insertUnlessPresent(pool, insert, arrays),
    );
    await expect(racing).rejects.toMatchObject({ code: '23505' });
  });
});
