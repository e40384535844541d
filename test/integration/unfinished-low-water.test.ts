import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLAIM_STALE_KEYS,
  SELECT_UNKNOWN_KEYS,
  UNFINISHED_SUMMARY,
} from '../../lib/idempotency/idempotency.sql.ts';
import { LIST_UNFINISHED } from '../../lib/idempotency/inspection.sql.ts';
import { moveLowWater } from '../../lib/idempotency/low-water.ts';
import { LOCK_LOW_WATER, SEQUENCE_POSITION } from '../../lib/idempotency/low-water.sql.ts';
import { withClient } from '../../dev/embedded-postgres/database-server.ts';
import { migrateDatabase } from '../../migrations/migrate.ts';
import { useEmptyDatabases, useTestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';

/**
 * Unfinished requests are found from the low-water mark up, and in the parked list below it
 * (migrations/0027, ADR 0062). The mark moves only past rows it can see: a row whose admission
 * is still open when the sweep looks must be found once it commits, parked if it is unfinished.
 */
const database = useTestDatabase('low-water');
const createEmptyDatabase = useEmptyDatabases();
let db: pg.Pool;
const TENANT = '00000000-0000-4000-8000-00000000000b';
const OPERATION = 'payments.create.v1';

beforeAll(() => {
  db = new pg.Pool({ connectionString: database.url, max: 4 });
});
afterAll(async () => {
  await db?.end();
});

const INSERT_STARTED = `
INSERT INTO idempotency_keys (tenant_id, operation, key, request_hash, state, recovery_point,
                              lease_expires_at, expires_at)
VALUES ($1, $2, $3, '\\x00', 'started', 'provider_charge_sent',
        now() - interval '1 second', now() + interval '1 day')
RETURNING id::text`;

/** $3 key prefix, $4 how many, $5 their window (an interval). */
const INSERT_FINISHED = `
INSERT INTO idempotency_keys (tenant_id, operation, key, request_hash, state, recovery_point,
                              outcome, expires_at)
SELECT $1, $2, $3 || g, '\\x00', 'finished', 'finished', 'SUCCEEDED', now() + $5::interval
  FROM generate_series(1, $4) AS g`;

async function insertStarted(on: pg.Pool | pg.PoolClient, key: string): Promise<string> {
  const { rows } = await on.query<{ id: string }>(INSERT_STARTED, [TENANT, OPERATION, key]);
  return rows[0]!.id;
}

async function lowWater(): Promise<bigint> {
  const { rows } = await db.query<{ low_water: string }>(
    'SELECT low_water::text AS low_water FROM idempotency_low_water',
  );
  return BigInt(rows[0]!.low_water);
}

/** Moves the mark until it is past `id` (other test files' transactions may hold it back). */
async function markPast(id: string): Promise<void> {
  await waitUntil(async () => BigInt((await moveLowWater(db)) ?? '0') > BigInt(id), {
    timeoutMs: 20_000,
    intervalMs: 20,
    what: `the low-water mark to pass ${id}`,
  });
}

/**
 * A pool for one sweep that runs `between` once, just before whichever of the sweep's first two
 * statements (the sequence's position and the mark's lock, which gives it its xid) is sent
 * second: between the two, in whatever order the sweep sends them.
 */
function poolRunningBetween(between: () => Promise<void>): pg.Pool {
  const firstTwo = new Set([SEQUENCE_POSITION, LOCK_LOW_WATER]);
  let sent = 0;
  return {
    connect: async () => {
      const client = await db.connect();
      const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
      const release = client.release.bind(client);
      (client as { query: unknown }).query = (...args: unknown[]) =>
        typeof args[0] === 'string' && firstTwo.has(args[0]) && ++sent === 2
          ? between().then(() => query(...args))
          : query(...args);
      client.release = (error?: Error | boolean) => {
        Reflect.deleteProperty(client, 'query');
        release(error);
      };
      return client;
    },
  } as unknown as pg.Pool;
}

/** Sweep after sweep moves the mark as far as it may while time passes. */
async function sweepAgainAndAgain(): Promise<void> {
  for (let i = 0; i < 6; i++) {
    await moveLowWater(db);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function claimedKeys(): Promise<string[]> {
  const { rows } = await db.query<{ key: string }>(CLAIM_STALE_KEYS, [60_000, 100, [OPERATION]]);
  return rows.map((r) => r.key).sort();
}

describe('the low-water mark of unfinished requests', () => {
  it('an id is taken after its transaction has an xid', async () => {
    // nextval alone assigns one only when it writes the sequence to the WAL, once in 32 calls:
    // this call does, so the next one, the id's, does not.
    await db.query(`SELECT nextval('idempotency_request_id_seq')`);
    const client = await db.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT idempotency_next_request_id()');
      const { rows } = await client.query<{ xid: string | null }>(
        'SELECT pg_current_xact_id_if_assigned()::text AS xid',
      );
      expect(rows[0]!.xid).not.toBeNull();
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('never passes a row whose admission is still open, and finds it once committed', async () => {
    const open = await db.connect();
    let openId: string;
    try {
      await open.query('BEGIN');
      openId = await insertStarted(open, 'lw-open');
      // Rows after it commit while the sweeps run.
      const laterId = await insertStarted(db, 'lw-later');
      await sweepAgainAndAgain();
      expect(await lowWater()).toBeLessThanOrEqual(BigInt(openId));
      expect(BigInt(laterId)).toBeGreaterThan(BigInt(openId));
      await open.query('COMMIT');
    } finally {
      open.release();
    }
    // Both are unfinished: the mark passes them only by parking them.
    await markPast(openId);
    const { rows: parked } = await db.query<{ request_id: string }>(
      'SELECT request_id::text AS request_id FROM idempotency_parked WHERE request_id = $1',
      [openId],
    );
    expect(parked).toHaveLength(1);
    expect(await claimedKeys()).toEqual(['lw-later', 'lw-open']);
  });

  it('never passes a row whose admission is still open, though nothing else commits', async () => {
    // Only the sweeps' own transactions end while the admission is open. A snapshot's xmax is
    // the last xid to end, plus one, so a wait for "every xid below the next to be assigned"
    // read from a snapshot would have named the admission's own xid, and been met at once.
    const open = await db.connect();
    let openId: string;
    try {
      await open.query('BEGIN');
      openId = await insertStarted(open, 'lw-alone');
      for (let i = 0; i < 4; i++) await moveLowWater(db);
      expect(await lowWater()).toBeLessThanOrEqual(BigInt(openId));
      await open.query('COMMIT');
    } finally {
      open.release();
    }
    await markPast(openId);
    expect(await claimedKeys()).toContain('lw-alone');
  });

  it('reads the sequence before its transaction has an xid', async () => {
    // An admission that takes its xid after the sweep's and its id before the sweep reads the
    // sequence would have an id below the next mark, and the wait for the sweep's xid would
    // not wait for it. Reading the sequence first leaves no such moment: an admission opened
    // between the two statements has an id at or past the position.
    const open = await db.connect();
    let openId: string | undefined;
    let committed = false;
    try {
      await moveLowWater(
        poolRunningBetween(async () => {
          await open.query('BEGIN');
          openId = await insertStarted(open, 'lw-between');
        }),
      );
      expect(openId).toBeDefined();
      await sweepAgainAndAgain();
      expect(await lowWater()).toBeLessThanOrEqual(BigInt(openId!));
      await open.query('COMMIT');
      committed = true;
    } finally {
      if (!committed) await open.query('ROLLBACK');
      open.release();
    }
    await markPast(openId!);
    expect(await claimedKeys()).toContain('lw-between');
  });

  it('stays while the sequence has a cache; a mark from another server does not hold it', async () => {
    const id = await insertStarted(db, 'lw-cache');
    // With a cache, sessions hand out ids from blocks of their own, out of order.
    await db.query('ALTER SEQUENCE idempotency_request_id_seq CACHE 10');
    try {
      for (let i = 0; i < 3; i++) await moveLowWater(db);
      expect(await lowWater()).toBeLessThanOrEqual(BigInt(id));
    } finally {
      await db.query('ALTER SEQUENCE idempotency_request_id_seq CACHE 1');
    }
    // As after a restore into a server whose xids are all lower than the one recorded.
    await db.query(`UPDATE idempotency_low_water SET next_after = '900000000000'::xid8`);
    await markPast(id);
  });

  it('catches up a step at a time, parking what each step passes', async () => {
    const first = await insertStarted(db, 'lw-step-1');
    await db.query(INSERT_FINISHED, [TENANT, OPERATION, 'lw-step-done-', 5, '1 day']);
    const last = await insertStarted(db, 'lw-step-2');
    const marks: bigint[] = [];
    await waitUntil(
      async () => {
        const mark = await moveLowWater(db, { maxStep: 2n });
        if (mark !== null) marks.push(BigInt(mark));
        return mark !== null && BigInt(mark) > BigInt(last);
      },
      { timeoutMs: 20_000, intervalMs: 20, what: 'the mark to pass the rows, two ids a move' },
    );
    for (let i = 1; i < marks.length; i++) {
      expect(marks[i]! - marks[i - 1]!).toBeLessThanOrEqual(2n);
    }
    const { rows } = await db.query<{ request_id: string }>(
      `SELECT request_id::text AS request_id FROM idempotency_parked
        WHERE request_id IN ($1, $2) ORDER BY idempotency_parked.request_id`,
      [first, last],
    );
    expect(rows.map((r) => r.request_id)).toEqual([first, last]);
  });

  it('parked requests are read by every reader of the unfinished, and leave once finished', async () => {
    const id = await insertStarted(db, 'lw-unknown');
    await db.query(
      `UPDATE idempotency_keys SET state = 'unknown', lease_expires_at = NULL WHERE id = $1`,
      [id],
    );
    await markPast(id);
    expect(await lowWater()).toBeGreaterThan(BigInt(id));

    const unknown = await db.query<{ key: string }>(SELECT_UNKNOWN_KEYS, [[OPERATION], 100]);
    expect(unknown.rows.map((r) => r.key)).toContain('lw-unknown');
    const summary = await db.query<{ unknown_outcomes: number }>(UNFINISHED_SUMMARY);
    expect(summary.rows[0]!.unknown_outcomes).toBe(1);
    const listed = await db.query<{ key: string }>(LIST_UNFINISHED, [['unknown'], 50]);
    expect(listed.rows.map((r) => r.key)).toEqual(['lw-unknown']);

    await db.query(
      `UPDATE idempotency_keys
          SET state = 'finished', recovery_point = 'finished', outcome = 'SUCCEEDED'
        WHERE id = $1`,
      [id],
    );
    await moveLowWater(db);
    const { rows } = await db.query('SELECT 1 FROM idempotency_parked WHERE request_id = $1', [id]);
    expect(rows).toHaveLength(0);
    expect((await db.query(LIST_UNFINISHED, [['unknown'], 50])).rows).toHaveLength(0);
  });
});

describe('migration 0027', () => {
  it('parks every unfinished request of before, and starts the mark after every row', async () => {
    const empty = await createEmptyDatabase('low_water_conversion');
    await migrateDatabase(empty.url, { to: '0026-answers-sealed-in-binary' });
    // Within the one partition a migrated database starts with, whatever the time of day (it
    // ends at the next midnight after the migration).
    const withinInitial = `(SELECT upper_bound FROM idempotency_partitions
                             WHERE name = 'idempotency_keys_initial') - interval '1 minute'`;
    const started = INSERT_STARTED.replace("now() + interval '1 day'", withinInitial);
    const finished = INSERT_FINISHED.replace('now() + $5::interval', withinInitial);
    await withClient(empty.url, async (c) => {
      await c.query(started, [TENANT, OPERATION, 'old-open']);
      await c.query(finished, [TENANT, OPERATION, 'old-done-', 3]);
      await c.query(started, [TENANT, OPERATION, 'old-open-last']);
    });

    await migrateDatabase(empty.url);

    await withClient(empty.url, async (c) => {
      const { rows: mark } = await c.query<{ past_every_row: boolean }>(
        `SELECT low_water > (SELECT max(id) FROM idempotency_keys) AS past_every_row
           FROM idempotency_low_water`,
      );
      expect(mark).toEqual([{ past_every_row: true }]);
      const { rows: parked } = await c.query<{ key: string }>(
        `SELECT k.key FROM idempotency_parked p JOIN idempotency_keys k ON k.id = p.request_id
          ORDER BY k.key`,
      );
      expect(parked.map((r) => r.key)).toEqual(['old-open', 'old-open-last']);
      const { rows: claimed } = await c.query<{ key: string }>(CLAIM_STALE_KEYS, [
        60_000,
        100,
        [OPERATION],
      ]);
      expect(claimed.map((r) => r.key).sort()).toEqual(['old-open', 'old-open-last']);
    });
  });
});
