import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Socket } from 'node:net';
import { TransactionEndedError } from '../../lib/db/batching-transaction.ts';
import {
  PipelinedStatements,
  SkippedStatementError,
  type Statement,
} from '../../lib/db/pipelined-statements.ts';
import { CHECKS, failUnless, isFailedCheck } from '../../lib/db/failed-checks.ts';
import {
  createPool,
  InterruptedAfterSendError,
  withOneRoundTrip,
  withTransaction,
  type TxClient,
} from '../../lib/db/pool.ts';
import { sqlState } from '../../lib/db/sql-state.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';

/**
 * A transaction sends the statements its code issues together in one round trip
 * (batching-transaction.ts, pipelined-statements.ts). Round trips are counted where they
 * end: PostgreSQL answers each one (a Sync, or a simple query) with exactly one ReadyForQuery.
 */
const database = useTestDatabase('pipelined-statements');
let pool: pg.Pool;
/** ReadyForQuery messages the pool's only connection has received. */
let roundTrips = 0;
/** The pool's newest connection. */
let latestClient: pg.PoolClient | undefined;

beforeAll(async () => {
  pool = createPool({ connectionString: database.url, max: 1, applicationName: 'pipeline-test' });
  pool.on('connect', (client) => {
    latestClient = client;
    const { connection } = client as unknown as { connection: pg.Connection };
    connection.on('readyForQuery', () => roundTrips++);
  });
  await pool.query(
    'CREATE TABLE pipeline_items (id int PRIMARY KEY, label text NOT NULL CHECK (label <> $$$$))',
  );
});
afterAll(async () => {
  await pool?.end();
});
beforeEach(async () => {
  await pool.query('TRUNCATE pipeline_items');
});

const INSERT_ITEM = 'INSERT INTO pipeline_items (id, label) VALUES ($1, $2) RETURNING id';
const COUNT_ITEMS = 'SELECT count(*)::int AS n FROM pipeline_items WHERE id >= $1';
/** How many transactions wrote the items so far, and whether it is the one running this. */
const TRANSACTION_OF_ITEMS = `
SELECT count(DISTINCT xmin::text)::int AS writers,
       bool_and(xmin::text = pg_current_xact_id()::text) AS current
  FROM pipeline_items WHERE id >= $1`;

async function countedRoundTrips(run: () => Promise<unknown>): Promise<number> {
  await pool.query('SELECT 1'); // the connection exists before counting starts
  const before = roundTrips;
  await run();
  // A failed statement is reported before its round trip has ended: a query of our own on the
  // pool's only connection runs once every round trip of `run` has, and is not counted.
  await pool.query('SELECT 1');
  return roundTrips - before - 1;
}

/** Until the pool's connection waits on a lock `holder` holds. */
async function waitForLockWait(holder: pg.Client): Promise<void> {
  await waitUntil(
    async () => {
      const { rows } = await holder.query(
        `SELECT 1 FROM pg_stat_activity
          WHERE application_name = 'pipeline-test' AND wait_event_type = 'Lock'`,
      );
      return rows.length > 0;
    },
    { timeoutMs: 10_000, intervalMs: 20, what: 'the pool to wait on the lock' },
  );
}

/** Runs `run` while another session, `holder`, holds advisory lock `lockId`. */
async function whileLockHeld<T>(
  lockId: number,
  run: (holder: pg.Client) => Promise<T>,
): Promise<T> {
  const holder = new pg.Client({ connectionString: database.url });
  await holder.connect();
  try {
    await holder.query('SELECT pg_advisory_lock($1)', [lockId]);
    await pool.query('SELECT 1'); // the pool's connection exists: latestClient is the one used
    return await run(holder);
  } finally {
    await holder.end();
  }
}

async function items(): Promise<number> {
  return (await pool.query<{ n: number }>(COUNT_ITEMS, [0])).rows[0]?.n ?? -1;
}

describe('a transaction', () => {
  it('sends BEGIN and the statements issued together in one round trip, then COMMIT', async () => {
    const trips = await countedRoundTrips(() =>
      withTransaction(pool, (tx) =>
        Promise.all([
          tx.query(INSERT_ITEM, [1, 'a']),
          tx.query(INSERT_ITEM, [2, 'b']),
          tx.query(INSERT_ITEM, [3, 'c']),
        ]),
      ),
    );
    expect(trips).toBe(2);
    expect(await items()).toBe(3);
  });

  it('sends a statement issued after an await in a round trip of its own, after the first', async () => {
    let seen = -1;
    const trips = await countedRoundTrips(() =>
      withTransaction(pool, async (tx) => {
        await tx.query(INSERT_ITEM, [1, 'a']);
        seen = (await tx.query<{ n: number }>(COUNT_ITEMS, [1])).rows[0]?.n ?? -1;
      }),
    );
    expect(trips).toBe(3);
    expect(seen).toBe(1);
  });

  it('answers each statement with its own rows, in order, each seeing the writes before it', async () => {
    const [first, counted, second] = await withTransaction(pool, (tx) =>
      Promise.all([
        tx.query<{ id: number }>(INSERT_ITEM, [7, 'a']),
        tx.query<{ n: number }>(COUNT_ITEMS, [7]),
        tx.query<{ id: number }>(INSERT_ITEM, [8, 'b']),
      ]),
    );
    expect(first.rows).toEqual([{ id: 7 }]);
    expect(counted.rows).toEqual([{ n: 1 }]);
    expect(second.rows).toEqual([{ id: 8 }]);
    expect(second.rowCount).toBe(1);
  });

  it('fails the statements after a failing one, rolls everything back, and serves on', async () => {
    const outcomes: PromiseSettledResult<unknown>[] = [];
    const failed = withTransaction(pool, async (tx) => {
      const settled = await Promise.allSettled([
        tx.query(INSERT_ITEM, [1, 'a']),
        tx.query(INSERT_ITEM, [1, 'duplicate']),
        tx.query(INSERT_ITEM, [2, 'b']),
      ]);
      outcomes.push(...settled);
      for (const outcome of settled) if (outcome.status === 'rejected') throw outcome.reason;
    });
    await expect(failed).rejects.toSatisfy((error) => sqlState(error) === '23505');
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    const [, duplicate, skipped] = outcomes as PromiseRejectedResult[];
    expect(sqlState(duplicate?.reason)).toBe('23505');
    expect(skipped?.reason).toBeInstanceOf(SkippedStatementError);
    expect(await items()).toBe(0);
    await withTransaction(pool, (tx) => tx.query(INSERT_ITEM, [1, 'a']));
    expect(await items()).toBe(1);
  });

  it('refuses a statement issued after it ended, instead of running it outside', async () => {
    let leaked: TxClient | undefined;
    await withTransaction(pool, async (tx) => {
      leaked = tx;
      await tx.query(INSERT_ITEM, [1, 'a']);
    });
    await expect(leaked!.query(INSERT_ITEM, [2, 'late'])).rejects.toBeInstanceOf(
      TransactionEndedError,
    );
    expect(await items()).toBe(1);
  });

  it('fails when COMMIT finds it aborted by a statement its work did not wait for', async () => {
    const unawaited: Array<Promise<unknown>> = [];
    const committed = withTransaction(pool, (tx) => {
      unawaited.push(tx.query(INSERT_ITEM, [1, 'a']), tx.query(INSERT_ITEM, [1, 'duplicate']));
      for (const statement of unawaited) statement.catch(() => undefined);
      return Promise.resolve();
    });
    await expect(committed).rejects.toThrow(/COMMIT was answered ROLLBACK/);
    expect(await items()).toBe(0);
  });

  it('reports why BEGIN or a first statement failed, not that work was skipped', async () => {
    const failed = withTransaction(pool, (tx) => tx.query(INSERT_ITEM, [1, 'a']), {
      first: [{ text: 'SELECT 1 / $1::int', values: [0] }],
    });
    await expect(failed).rejects.toSatisfy((error) => sqlState(error) === '22012');
    expect(await items()).toBe(0);
  });
});

describe('a round trip sent outside a transaction', () => {
  it('is one implicit transaction, and a failure at its commit reaches the last statement', async () => {
    await pool.query(
      `CREATE TABLE IF NOT EXISTS pipeline_deferred (id int,
         CONSTRAINT pipeline_deferred_uq UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)`,
    );
    const client = await pool.connect();
    try {
      const insert = 'INSERT INTO pipeline_deferred (id) VALUES ($1)';
      const named = client as unknown as { statementName(text: string): string };
      // Both INSERTs are answered; the deferred check fails when the Sync commits them.
      const batch = new PipelinedStatements(
        [
          { text: insert, values: [1] },
          { text: insert, values: [1] },
        ],
        (text) => named.statementName(text),
      );
      client.query(batch as unknown as pg.Submittable);
      const [first, last] = await Promise.allSettled(batch.results);
      expect(first?.status).toBe('fulfilled');
      expect(last?.status).toBe('rejected');
      expect(sqlState((last as PromiseRejectedResult).reason)).toBe('23505');
      const { rows } = await client.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pipeline_deferred',
      );
      expect(rows[0]?.n).toBe(0);
    } finally {
      client.release();
    }
  });
});

describe('a value pg cannot send', () => {
  it('fails its round trip before a byte is written, and the connection serves on', async () => {
    const unsendable = { amount: 10n }; // JSON.stringify throws on a BigInt inside an object
    let failure: unknown;
    const trips = await countedRoundTrips(async () => {
      failure = await withTransaction(pool, (tx) =>
        Promise.all([
          tx.query(INSERT_ITEM, [1, 'a']),
          tx.query('SELECT $1::jsonb AS doc', [unsendable]),
        ]),
      ).then(
        () => undefined,
        (error: unknown) => error,
      );
    });
    expect(failure).toBeInstanceOf(TypeError);
    expect(trips, 'only the ROLLBACK went out').toBe(1);
    expect(await items()).toBe(0);
    await withTransaction(pool, (tx) => tx.query(INSERT_ITEM, [2, 'b']));
    expect(await items()).toBe(1);
  });
});

describe('prepared statements in one round trip', () => {
  it('prepares a statement once per connection, even when it appears twice in one round trip', async () => {
    const text = 'SELECT $1::int * 2 AS doubled';
    const results = await withTransaction(pool, (tx) =>
      Promise.all([
        tx.query<{ doubled: number }>(text, [2]),
        tx.query<{ doubled: number }>(text, [5]),
      ]),
    );
    expect(results.map((r) => r.rows[0]?.doubled)).toEqual([4, 10]);
    const { rows } = await pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1',
      [text],
    );
    expect(rows[0]?.n).toBe(1);
  });

  it('knows which statements a failed round trip prepared and which it never reached', async () => {
    // Both are new to the connection. The first is prepared, then fails as it runs; the
    // second's Parse is skipped. Misremembered, the first would be prepared twice (42P05)
    // and the second executed unprepared (26000) on their next use.
    const failsAsItRuns = 'INSERT INTO pipeline_items (id, label) VALUES ($1, $2) RETURNING label';
    const neverReached = 'SELECT $1::text AS echoed';
    const failed = withTransaction(pool, (tx) =>
      Promise.all([tx.query(failsAsItRuns, [1, '']), tx.query(neverReached, ['x'])]),
    );
    await expect(failed).rejects.toSatisfy((error) => sqlState(error) === '23514');
    const reused = await withTransaction(pool, (tx) =>
      Promise.all([
        tx.query<{ label: string }>(failsAsItRuns, [1, 'ok']),
        tx.query<{ echoed: string }>(neverReached, ['x']),
      ]),
    );
    expect(reused.map((r): unknown => r.rows[0])).toEqual([{ label: 'ok' }, { echoed: 'x' }]);
  });
});

describe('a connection lost during a round trip', () => {
  /**
   * Sends a round trip that waits on an advisory lock another session holds, cuts its
   * connection with `cut` once it waits, and checks what every statement of it came to.
   */
  async function cutWhileWaiting(cut: (holder: pg.Client) => Promise<void>): Promise<void> {
    const lockId = 424242;
    await whileLockHeld(lockId, async (holder) => {
      const outcomes: PromiseSettledResult<unknown>[] = [];
      const waiting = withTransaction(pool, async (tx) => {
        const settled = await Promise.allSettled([
          tx.query('SELECT pg_advisory_xact_lock($1::bigint)', [lockId]),
          tx.query(INSERT_ITEM, [1, 'a']),
        ]);
        outcomes.push(...settled);
        for (const outcome of settled) if (outcome.status === 'rejected') throw outcome.reason;
      });
      waiting.catch(() => undefined);
      await waitForLockWait(holder);
      await cut(holder);
      await expect(waiting).rejects.toBeDefined();
      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    });
    expect(await items()).toBe(0);
    await withTransaction(pool, (tx) => tx.query(INSERT_ITEM, [1, 'a']));
    expect(await items()).toBe(1);
  }

  it('fails every statement of it when the socket drops, and the pool replaces it', async () => {
    await cutWhileWaiting(() => {
      const { connection } = latestClient as unknown as { connection: { stream: Socket } };
      connection.stream.destroy();
      return Promise.resolve();
    });
  });

  it('fails every statement of it when the backend is terminated, and the pool serves on', async () => {
    await cutWhileWaiting(async (holder) => {
      const { rows } = await holder.query<{ done: boolean }>(
        `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
          WHERE application_name = 'pipeline-test' AND wait_event_type = 'Lock'`,
      );
      expect(rows.some((row) => row.done)).toBe(true);
    });
  });
});

describe('a transaction that commits in one round trip (withOneRoundTrip)', () => {
  const item = (id: number, label: string) => ({ text: INSERT_ITEM, values: [id, label] });

  it('sends its statements together as one transaction, commits it, and answers each in order', async () => {
    let answers: pg.QueryResult[] = [];
    const trips = await countedRoundTrips(async () => {
      answers = await withOneRoundTrip(
        pool,
        [item(1, 'a'), item(2, 'b'), { text: TRANSACTION_OF_ITEMS, values: [0] }],
        { first: [{ text: COUNT_ITEMS, values: [0] }] },
      );
    });
    expect(trips).toBe(1);
    expect(answers.slice(0, 2).map((a): unknown => a.rows)).toEqual([[{ id: 1 }], [{ id: 2 }]]);
    // One transaction: the rows it wrote carry its xid, and it is the one still running.
    expect(answers[2]!.rows).toEqual([{ writers: 1, current: true }]);
    expect(await items()).toBe(2);
  });

  it('commits nothing when a statement’s own check fails, rejects with that check, and serves on', async () => {
    const noSuchItem = {
      text: `SELECT ${failUnless('EXISTS (SELECT 1 FROM pipeline_items WHERE id = $1)', CHECKS.fenceLost)}`,
      values: [99],
    };
    let failure: unknown;
    const trips = await countedRoundTrips(async () => {
      failure = await withOneRoundTrip(pool, [item(1, 'a'), noSuchItem, item(2, 'b')]).catch(
        (error: unknown) => error,
      );
    });
    // The failing statement's own error, not the skip of the one after it. PostgreSQL rolled
    // the transaction back at the end of the round trip: no ROLLBACK follows it.
    expect(isFailedCheck(failure, CHECKS.fenceLost)).toBe(true);
    expect(isFailedCheck(failure, CHECKS.admissionLost)).toBe(false);
    expect(trips).toBe(1);
    expect(await items()).toBe(0); // the INSERT before the check was rolled back with it
    await withOneRoundTrip(pool, [item(3, 'c')]);
    expect(await items()).toBe(1);
  });

  it('rejects when its commit fails, with nothing committed and no ROLLBACK sent', async () => {
    await pool.query(
      `CREATE TABLE IF NOT EXISTS pipeline_deferred_commit (id int,
         CONSTRAINT pipeline_deferred_commit_uq UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)`,
    );
    const insert = { text: 'INSERT INTO pipeline_deferred_commit (id) VALUES ($1)', values: [1] };
    let failure: unknown;
    const trips = await countedRoundTrips(async () => {
      failure = await withOneRoundTrip(pool, [item(1, 'a'), insert, insert]).catch(
        (error: unknown) => error,
      );
    });
    // Every statement ran; the deferred check failed the commit at the end of the round trip.
    expect(sqlState(failure)).toBe('23505');
    expect(trips).toBe(1);
    expect(await items()).toBe(0);
    const { rows } = await pool.query('SELECT 1 FROM pipeline_deferred_commit');
    expect(rows).toEqual([]);
  });

  it('runs beforeSend with the connection checked out, and sends nothing when it throws', async () => {
    let idleDuringBeforeSend = -1;
    let failure: unknown;
    const trips = await countedRoundTrips(async () => {
      failure = await withOneRoundTrip(pool, [item(1, 'a')], {
        beforeSend: () => {
          idleDuringBeforeSend = pool.idleCount;
          return Promise.reject(new Error('fault point'));
        },
      }).catch((error: unknown) => error);
    });
    expect(failure).toEqual(new Error('fault point'));
    expect(idleDuringBeforeSend).toBe(0);
    expect(trips).toBe(0); // nothing was sent, so there is nothing to roll back
    expect(await items()).toBe(0);
  });

  it('reports what afterSend throws once the round trip has ended, as a commit in doubt', async () => {
    let idleDuringAfterSend = -1;
    const failure: unknown = await withOneRoundTrip(pool, [item(1, 'a')], {
      afterSend: () => {
        idleDuringAfterSend = pool.idleCount;
        return Promise.reject(new Error('fault point'));
      },
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InterruptedAfterSendError);
    expect(idleDuringAfterSend).toBe(0);
    expect(await items()).toBe(1); // it had committed: the caller reads that back
  });

  const lockId = 434343;
  /**
   * After the lock is released, how long the cut session gets to run what it was sent: what it
   * must not have done is an absence, which cannot be polled for, so time must pass.
   */
  const LOST_SESSION_RUN_MS = 200;
  const waitForLock = { text: 'SELECT pg_advisory_xact_lock($1::bigint)', values: [lockId] };

  /**
   * Sends `statements` in one round trip (one of them waits on advisory lock `lockId`, which
   * another session holds), cuts the connection with `cut` once it waits, then releases the
   * lock and gives the lost session time to run what it was sent. Returns the call's error.
   */
  async function cutWhileWaiting(
    statements: Statement[],
    cut: (holder: pg.Client) => Promise<void>,
  ): Promise<unknown> {
    return whileLockHeld(lockId, async (holder) => {
      const waiting = withOneRoundTrip(pool, statements);
      waiting.catch(() => undefined);
      await waitForLockWait(holder);
      await cut(holder);
      const failure = await waiting.catch((error: unknown) => error);
      await holder.query('SELECT pg_advisory_unlock($1)', [lockId]);
      await sleep(LOST_SESSION_RUN_MS);
      return failure;
    });
  }

  it('rejects with the connection’s error when the backend dies after the statements left', async () => {
    // Past the lock, a check that fails: the error must be the connection's, not the check's.
    const failing = { text: `SELECT ${failUnless('false', CHECKS.fenceLost)}`, values: [] };
    const failure = await cutWhileWaiting([item(1, 'a'), waitForLock, failing], async (holder) => {
      await holder.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE application_name = 'pipeline-test' AND wait_event_type = 'Lock'`,
      );
    });
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(SkippedStatementError);
    expect(['57P01', undefined]).toContain(sqlState(failure)); // terminated, or the socket closed
    expect(await items()).toBe(0);
    await withOneRoundTrip(pool, [item(1, 'a')]);
    expect(await items()).toBe(1);
  });

  it('ends a lost connection’s session before rejecting: a backend waiting on a lock never commits what it was sent', async () => {
    let lostBackend = 0;
    // No check anywhere: a lost session that ran on would commit both items.
    const failure = await cutWhileWaiting([item(1, 'a'), waitForLock, item(2, 'b')], () => {
      const { connection, processID } = latestClient as unknown as {
        connection: { stream: Socket };
        processID: number;
      };
      lostBackend = processID;
      // Only our side goes: PostgreSQL still waits on the lock, holding the whole round trip.
      connection.stream.destroy();
      return Promise.resolve();
    });
    expect(failure).toBeInstanceOf(Error);
    expect(sqlState(failure)).toBeUndefined();
    const { rows } = await pool.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [
      lostBackend,
    ]);
    expect(rows).toEqual([]);
    // Without ending the session, the backend would get the lock once it was released and
    // commit both items after the caller had been told the round trip failed.
    expect(await items()).toBe(0);
  });
});
