import pg from 'pg';
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/logging/logger.ts';
import { KEY_SETTLED_CHANNEL, KeyWatcher } from '../../lib/idempotency/key-watcher.ts';
import { waitForKey } from '../../lib/idempotency/key-wait.ts';
import { defineOperation } from '../../lib/idempotency/operation.ts';
import type { KeyRow } from '../../lib/idempotency/types.ts';
import { startSilentServer } from '../support/silent-server.ts';
import { startTcpFaultProxy } from '../support/tcp-fault-proxy.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';

/**
 * The process's listening connection for key waits, against a real PostgreSQL: a notification
 * wakes the waiters of its row; a lost connection wakes every waiter to re-read (a notification
 * sent while nobody listened is gone), once LISTEN is in effect again.
 */
const database = useTestDatabase('key-watcher');
let db: pg.Pool;
let watcher: KeyWatcher;
const APPLICATION = 'key-watcher-test';

beforeAll(() => {
  db = new pg.Pool({ connectionString: database.url, max: 2 });
});
afterAll(async () => {
  await db?.end();
});
afterEach(async () => {
  await watcher?.close();
});

function newWatcher(connectionString = database.url): KeyWatcher {
  watcher = new KeyWatcher({
    connectionString,
    applicationName: APPLICATION,
    log: createLogger({ level: 'silent' }),
  });
  return watcher;
}

async function listenerPids(): Promise<number[]> {
  const { rows } = await db.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`,
    [APPLICATION],
  );
  return rows.map((r) => r.pid);
}

describe('KeyWatcher', () => {
  it('wakes the waiters of a notified row, and only them', async () => {
    const keys = newWatcher();
    const mine = keys.subscribe('101');
    const other = keys.subscribe('102');
    await keys.listening();
    await db.query(`SELECT pg_notify($1, '101')`, [KEY_SETTLED_CHANNEL]);
    expect(await mine.next(5_000)).toBe('notified');
    expect(await other.next(50)).toBe('timeout');
  });

  it('keeps a notification that arrives before the waiter starts waiting', async () => {
    const keys = newWatcher();
    const mine = keys.subscribe('201');
    await keys.listening();
    await db.query(`SELECT pg_notify($1, '201')`, [KEY_SETTLED_CHANNEL]);
    await waitUntil(async () => (await mine.next(0)) === 'notified', {
      timeoutMs: 2_000,
      intervalMs: 10,
      what: 'the early notification to be kept',
    });
  });

  it('after its connection is killed, listens again and wakes every waiter to re-read', async () => {
    const keys = newWatcher();
    const mine = keys.subscribe('301');
    await keys.listening();
    const [pid] = await listenerPids();
    expect(pid).toBeDefined();
    // The notification is sent while nobody listens: it is lost, so only a re-read saves it.
    await db.query('SELECT pg_terminate_backend($1)', [pid]);
    await db.query(`SELECT pg_notify($1, '301')`, [KEY_SETTLED_CHANNEL]);
    expect(await mine.next(5_000)).toBe('recheck');
    const again = await waitUntil(
      async () => {
        const pids = await listenerPids();
        return pids.length === 1 && pids[0] !== pid ? pids : null;
      },
      { timeoutMs: 5_000, what: 'a new listening connection' },
    );
    expect(again).toHaveLength(1);
    const next = keys.subscribe('302');
    await keys.listening();
    await db.query(`SELECT pg_notify($1, '302')`, [KEY_SETTLED_CHANNEL]);
    expect(await next.next(5_000)).toBe('notified');
  });

  it('wakes every waiter when it closes, and refuses to listen after', async () => {
    const keys = newWatcher();
    const mine = keys.subscribe('401');
    await keys.listening();
    const waiting = mine.next(10_000);
    await keys.close();
    expect(await waiting).toBe('recheck');
    await expect(keys.listening()).rejects.toThrow('key watcher closed');
    expect(await listenerPids()).toEqual([]);
  });
});

describe('KeyWatcher, against a database that never answers', () => {
  const TENANT = '6a7c1f7e-0000-4000-8000-000000000001';
  const STALLED_OPERATION = defineOperation({
    id: 'test.stalled.v1',
    publicName: 'stalledTest',
    service: 'payments',
    answerVersion: 1,
    outcomeOf: () => 'SUCCEEDED',
  });

  it('gives up listening instead of waiting for ever', async () => {
    const silent = await startSilentServer();
    try {
      newWatcher(silent.url);
      await expect(watcher.listening()).rejects.toThrow();
    } finally {
      await silent.stop();
    }
  }, 20_000);

  it('answers a wait as unavailable within the wait, not after it', async () => {
    // The wait is shorter than the watcher's own connect timeout: only the wait's bound can
    // end it in time. The test's timeout is what fails if nothing does.
    const silent = await startSilentServer();
    try {
      newWatcher(silent.url);
      const woke = await waitForKey(
        { pool: db, keyWatcher: watcher, log: createLogger({ level: 'silent' }) },
        {
          scope: {
            tenantId: TENANT,
            operation: STALLED_OPERATION,
            key: 'k',
          },
          row: {
            id: '501',
            operation: STALLED_OPERATION.id,
            fencing_token: '1',
            lease_remaining_seconds: 30,
          } as KeyRow,
          remainingMs: 300,
        },
      );
      expect(woke).toBe('unavailable');
    } finally {
      await silent.stop();
    }
  }, 4_000);

  it('marks nothing once it has given up, though LISTEN comes up later', async () => {
    // A late mark would set `waiting` on a row nobody waits on, and the owner's next
    // transition would notify for nothing.
    const { rows } = await db.query<{ id: string; fencing_token: string }>(
      `INSERT INTO idempotency_keys (tenant_id, operation, key, request_hash, state,
                                     recovery_point, lease_expires_at, expires_at)
       VALUES ($1, $2, 'k-late', '\\x00', 'started', 'first',
               now() + interval '1 minute', now() + interval '1 day')
       RETURNING id::text, fencing_token::text`,
      [TENANT, STALLED_OPERATION.id],
    );
    const row = rows[0]!;
    const url = new URL(database.url);
    const proxy = await startTcpFaultProxy({ host: url.hostname, port: Number(url.port || 5432) });
    try {
      url.hostname = proxy.host;
      url.port = String(proxy.port);
      newWatcher(url.toString());
      const held = proxy.inject('blackhole', { ms: 1_000 });
      const woke = await waitForKey(
        { pool: db, keyWatcher: watcher, log: createLogger({ level: 'silent' }) },
        {
          scope: { tenantId: TENANT, operation: STALLED_OPERATION, key: 'k-late' },
          row: { ...row, operation: STALLED_OPERATION.id, lease_remaining_seconds: 60 } as KeyRow,
          remainingMs: 200,
        },
      );
      expect(woke).toBe('unavailable');
      await held;
      await watcher.listening();
      // Whatever the given-up waiter sends once LISTEN is up leaves before this read.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const { rows: after } = await db.query<{ waiting: boolean }>(
        'SELECT waiting FROM idempotency_keys WHERE id = $1',
        [row.id],
      );
      expect(after).toEqual([{ waiting: false }]);
    } finally {
      await proxy.close();
    }
  }, 15_000);
});
