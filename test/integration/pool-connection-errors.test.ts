import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, withTransaction } from '../../lib/db/pool.ts';
import { useTestDatabase } from '../support/test-database.ts';

/**
 * A pooled connection whose backend is terminated must never take the process down, whenever
 * the termination arrives. The chaos suite (seed 21) found a window: between the pool handing a
 * client to withTransaction (the pool's own 'error' listener is removed at checkout) and
 * withTransaction attaching its listener (after `await pool.connect()` resumes), a FATAL
 * "terminating connection" parsed in that gap — typically in the same TCP read as a fresh
 * connection's ReadyForQuery — was an unhandled 'error' event, and the gateway died.
 */
const database = useTestDatabase('pool-errors');
/** The pace of the terminations: a schedule, not a wait, so workers are cut mid-transaction. */
const TERMINATE_EVERY_MS = 25;
const APP = 'pool-errors-test';
let admin: pg.Pool;

beforeAll(() => {
  admin = new pg.Pool({ connectionString: database.url, max: 1 });
});
afterAll(async () => {
  await admin?.end();
});

/** Listens for an uncaught exception while `run` runs (vitest would report it too, late). */
async function uncaughtDuring(run: () => Promise<void>): Promise<unknown[]> {
  const caught: unknown[] = [];
  const listener = (error: unknown) => caught.push(error);
  process.on('uncaughtException', listener);
  try {
    await run();
  } finally {
    process.off('uncaughtException', listener);
  }
  return caught;
}

describe('a pooled connection terminated by PostgreSQL', () => {
  it('errors between checkout and withTransaction taking the client are not unhandled', async () => {
    const pool = createPool({ connectionString: database.url, max: 2, applicationName: APP });
    let thrown: unknown = null;
    // The checkout's callback runs now; the code after `await pool.connect()` runs in a later
    // microtask. One queued here runs in between: exactly the gap a FATAL could land in.
    pool.once('acquire', (client: pg.PoolClient) =>
      queueMicrotask(() => {
        try {
          client.emit('error', new Error('terminating connection due to administrator command'));
        } catch (error) {
          thrown = error;
        }
      }),
    );
    await withTransaction(pool, (tx) => tx.query('SELECT 1'));
    await pool.end();
    expect(thrown).toBeNull();
  });

  it('survives its backends being terminated again and again under transactions', async () => {
    const pool = createPool({ connectionString: database.url, max: 8, applicationName: APP });
    let stop = false;
    let committed = 0;
    const worker = async () => {
      while (!stop) {
        try {
          await withTransaction(pool, async (tx) => {
            await tx.query('SELECT 1');
            await tx.query('SELECT pg_sleep(0.001)');
          });
          committed += 1;
        } catch {
          // Terminated mid-transaction: expected, the next attempt takes a fresh connection.
        }
      }
    };
    const caught = await uncaughtDuring(async () => {
      const workers = Array.from({ length: 16 }, worker);
      for (let i = 0; i < 60; i++) {
        await new Promise((resolve) => setTimeout(resolve, TERMINATE_EVERY_MS));
        await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = $1`,
          [APP],
        );
      }
      stop = true;
      await Promise.all(workers);
    });
    // The pool still serves after the storm.
    await withTransaction(pool, (tx) => tx.query('SELECT 1'));
    await pool.end();
    expect(caught).toEqual([]);
    expect(committed).toBeGreaterThan(0);
  });
});
