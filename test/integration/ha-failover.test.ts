/**
 * The database layer on a real pg_auto_failover formation (scripts/ha/formation.sh): a primary
 * and a synchronous standby behind one multi-host DATABASE_URL. Every pool reaches the primary
 * whatever order the URL names the hosts in, follows it through a crash and a switchover, and
 * loses nothing it acknowledged; the LISTEN connection follows too; a stalled standby delays
 * commits and never turns one into a silent local-only success.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateDatabase } from '../../migrations/migrate.ts';
import { createPool, withOneRoundTrip } from '../../lib/db/pool.ts';
import { CommitUnconfirmedError } from '../../lib/db/lost-session.ts';
import { readBackDurably } from '../../lib/db/durable-read-back.ts';
import { createOrm } from '../../app/orm.ts';
import { KEY_SETTLED_CHANNEL, KeyWatcher } from '../../lib/idempotency/key-watcher.ts';
import { createLogger } from '../../lib/logging/logger.ts';
import { startFormation, type Formation, type NodeName } from '../support/ha-formation.ts';
import { waitUntil } from '../support/wait-until.ts';

let formation: Formation;

beforeAll(async () => {
  formation = await startFormation();
  const admin = new pg.Client({ connectionString: formation.nodeUrl('node_1') });
  await admin.connect();
  await admin.query('CREATE TABLE acks (id int PRIMARY KEY, at timestamptz DEFAULT now())');
  await admin.end();
}, 300_000);

afterAll(async () => {
  await formation?.stop();
}, 60_000);

const serverOf = (pool: pg.Pool) =>
  pool
    .query<{ port: number; in_recovery: boolean }>(
      'SELECT inet_server_port() AS port, pg_is_in_recovery() AS in_recovery',
    )
    .then((r) => r.rows[0]!);

const portOf = (node: NodeName) => Number(new URL(formation.nodeUrl(node)).port);

/**
 * Writers that insert ids one after another, counting an id as acknowledged only when its
 * COMMIT came back. Failures (the outage) are retried with the next id. Stopped by `stop()`.
 */
function startWriters(pool: pg.Pool, writers: number, firstId: number) {
  const acknowledged: number[] = [];
  const failures: string[] = [];
  let nextId = firstId;
  let stopped = false;
  let lastAckAt = 0;
  const loops = Array.from({ length: writers }, async () => {
    while (!stopped) {
      const id = nextId++;
      try {
        await pool.query('INSERT INTO acks (id) VALUES ($1)', [id]);
        acknowledged.push(id);
        lastAckAt = Date.now();
      } catch (error) {
        failures.push(error instanceof Error ? error.message : String(error));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  });
  return {
    acknowledged,
    failures,
    lastAckAt: () => lastAckAt,
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/**
 * The pid of a session of `application` whose `query` waits for the synchronous standby, once
 * there is one; ended (pg_terminate_backend) when `end`.
 */
function waitingForStandby(
  admin: pg.Client,
  session: { application: string; query: string; end: boolean },
): Promise<number> {
  const { application, query, end } = session;
  return waitUntil(
    async () => {
      const { rows } = await admin.query<{ pid: number }>(
        `SELECT pid, CASE WHEN $3 THEN pg_terminate_backend(pid) END AS ended
           FROM pg_stat_activity
          WHERE application_name = $1 AND wait_event = 'SyncRep' AND query LIKE $2
          LIMIT 1`,
        [application, `%${query}%`, end],
      );
      return rows[0]?.pid;
    },
    { timeoutMs: 10_000, what: `a ${application} session waiting for the standby: ${query}` },
  );
}

async function idsOn(node: NodeName, ids: number[]): Promise<Set<number>> {
  const client = new pg.Client({ connectionString: formation.nodeUrl(node) });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: number }>('SELECT id FROM acks WHERE id = ANY($1)', [
      ids,
    ]);
    return new Set(rows.map((r) => r.id));
  } finally {
    await client.end();
  }
}

describe('a multi-host DATABASE_URL on a pg_auto_failover formation', () => {
  it('reaches the primary whatever order the URL names the hosts in', async () => {
    const primary = await formation.primary();
    expect(primary).toBe('node_1');
    const standbyFirst = `postgresql://postgres@127.0.0.1:${portOf('node_2')},127.0.0.1:${portOf('node_1')}/payments?target_session_attrs=read-write`;
    const pool = createPool({ connectionString: standbyFirst, max: 2, applicationName: 'ha-test' });
    try {
      expect(await serverOf(pool)).toEqual({ port: portOf('node_1'), in_recovery: false });
    } finally {
      await pool.end();
    }
  });

  it('runs the migrations on the primary', async () => {
    const admin = createPool({
      connectionString: formation.url,
      max: 1,
      applicationName: 'ha-test',
    });
    await admin.query('CREATE DATABASE pgw_ha_migrated');
    await admin.end();
    // The URL names the standby first: a migrator that took the first host would fail there.
    const url = `postgresql://postgres@127.0.0.1:${portOf('node_2')},127.0.0.1:${portOf('node_1')}/pgw_ha_migrated?target_session_attrs=read-write`;
    await migrateDatabase(url);
    const check = new pg.Client({
      connectionString: formation.nodeUrl('node_2', 'pgw_ha_migrated'),
    });
    await check.connect();
    try {
      // Replicated from the primary to the standby. A synchronous commit returns once the standby
      // has flushed it, not replayed it: a read there a moment later may not see it yet.
      await waitUntil(
        async () =>
          (
            await check.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'payments'`,
            )
          ).rows[0]?.n === 1,
        { timeoutMs: 10_000, what: 'the migrated tables on the standby' },
      );
    } finally {
      await check.end();
    }
  });

  it('follows a crashed primary to the promoted standby and loses no acknowledged commit', async () => {
    const pool = createPool({
      connectionString: formation.url,
      max: 4,
      applicationName: 'ha-test',
    });
    const orm = createOrm({
      databaseUrl: formation.url,
      poolMax: 2,
      applicationName: 'ha-test-orm',
    });
    const ormPort = async () =>
      Number(
        (
          await orm.em
            .fork()
            .getConnection()
            .execute<Array<{ port: number }>>('SELECT inet_server_port() AS port')
        )[0]?.port,
      );
    const watcher = new KeyWatcher({
      connectionString: formation.url,
      applicationName: 'ha-test-listen',
      log: createLogger({ level: 'silent' }),
    });
    try {
      await watcher.listening();
      expect(await ormPort()).toBe(portOf('node_1'));
      const writers = startWriters(pool, 4, 1_000);
      await waitUntil(() => writers.acknowledged.length >= 50, {
        timeoutMs: 10_000,
        what: 'writes before the crash',
      });
      await formation.killNode('node_1');
      const crashedAt = Date.now(); // node_1 no longer answers: later acks come from node_2
      await waitUntil(() => writers.lastAckAt() > crashedAt, {
        timeoutMs: 45_000,
        what: 'a write acknowledged by the promoted standby',
      });
      const acknowledged = [...writers.acknowledged];
      await writers.stop();
      expect(await serverOf(pool)).toEqual({ port: portOf('node_2'), in_recovery: false });
      // Every commit whose answer came back is on the new primary: the standby was synchronous.
      const present = await idsOn('node_2', acknowledged);
      expect(acknowledged.filter((id) => !present.has(id))).toEqual([]);

      // The LISTEN connection for Prefer: wait is on the new primary too.
      const subscription = watcher.subscribe('row-after-failover');
      await waitUntil(
        async () => {
          await watcher.listening();
          await pool.query(`SELECT pg_notify($1, 'row-after-failover')`, [KEY_SETTLED_CHANNEL]);
          return (await subscription.next(500)) === 'notified';
        },
        { timeoutMs: 30_000, what: 'a notification from the new primary' },
      );
      subscription.cancel();

      // The ORM's pool (reads and management) drops its connections to the old primary.
      await waitUntil(async () => (await ormPort().catch(() => 0)) === portOf('node_2'), {
        timeoutMs: 30_000,
        what: 'the ORM on the new primary',
      });
    } finally {
      await watcher.close();
      await pool.end();
      await orm.close(true);
    }
    // The old primary rejoins as a standby (pg_rewind).
    await formation.runNode('node_1');
    await formation.waitForStates('secondary,primary');
  }, 120_000);

  it('follows a switchover and loses no acknowledged commit', async () => {
    const pool = createPool({
      connectionString: formation.url,
      max: 4,
      applicationName: 'ha-test',
    });
    try {
      const writers = startWriters(pool, 4, 100_000);
      await waitUntil(() => writers.acknowledged.length >= 50, {
        timeoutMs: 10_000,
        what: 'writes before the switchover',
      });
      const before = await formation.primary();
      const switchedAt = Date.now();
      await formation.switchover();
      await waitUntil(() => writers.lastAckAt() > switchedAt + 100, {
        timeoutMs: 45_000,
        what: 'a write acknowledged after the switchover',
      });
      const after = await formation.primary();
      expect(after).not.toBe(before);
      const acknowledged = [...writers.acknowledged];
      await writers.stop();
      expect((await serverOf(pool)).port).toBe(portOf(after!));
      const present = await idsOn(after!, acknowledged);
      expect(acknowledged.filter((id) => !present.has(id))).toEqual([]);
    } finally {
      await pool.end();
    }
    await formation.waitForStates((s) => s.split(',').sort().join(',') === 'primary,secondary');
  }, 120_000);

  it('holds commits while the synchronous standby stalls, and completes them once it is dropped', async () => {
    const primary = (await formation.primary())!;
    const standby: NodeName = primary === 'node_1' ? 'node_2' : 'node_1';
    const pool = createPool({
      connectionString: formation.url,
      max: 2,
      applicationName: 'ha-test',
    });
    try {
      await pool.query('SELECT 1');
      await formation.freezeNode(standby, true);
      // No statement_timeout cancels this wait (it would turn the commit into a local-only
      // success with a WARNING): it completes when the monitor takes the standby out of the
      // synchronous set, and it is then on the primary.
      await pool.query('INSERT INTO acks (id) VALUES (999999)');
      // It came back only once the monitor had told the primary to go on alone.
      expect(await formation.states('assigned')).toMatch(/wait_primary/);
      expect(await idsOn(primary, [999_999])).toEqual(new Set([999_999]));
    } finally {
      await formation.freezeNode(standby, false);
      await pool.end();
    }
    await formation.waitForStates((s) => s.split(',').sort().join(',') === 'primary,secondary');
  }, 120_000);

  /**
   * The primary's WAL senders held: its standby hears nothing, yet every node stays healthy to
   * the monitor, so nothing drops the standby from the synchronous set and every commit waits.
   * `then` runs meanwhile, with a pool of `application` sessions on the formation (connected
   * before the senders are held) and an admin session on the primary; `release` lets the
   * senders go early.
   */
  async function withStandbyDeaf(
    opts: { application: string; onConnect?: (client: pg.PoolClient) => void },
    then: (ctx: {
      pool: pg.Pool;
      admin: pg.Client;
      primary: NodeName;
      standby: NodeName;
      release: () => Promise<void>;
    }) => Promise<void>,
  ): Promise<void> {
    const primary = (await formation.primary())!;
    const standby: NodeName = primary === 'node_1' ? 'node_2' : 'node_1';
    const pool = createPool({
      connectionString: formation.url,
      max: 2,
      applicationName: opts.application,
    });
    if (opts.onConnect !== undefined) pool.on('connect', opts.onConnect);
    const admin = new pg.Client({ connectionString: formation.nodeUrl(primary) });
    await admin.connect();
    let held = false;
    const release = async () => {
      if (held) await formation.holdWal(primary, false);
      held = false;
    };
    try {
      await pool.query('SELECT 1');
      await formation.holdWal(primary, true);
      held = true;
      await then({ pool, admin, primary, standby, release });
    } finally {
      await release().catch(() => undefined);
      await admin.end();
      await pool.end();
    }
  }

  /**
   * A round trip whose session is lost while its commit waits for the standby: the primary's WAL
   * senders are held (every node stays healthy to the monitor, so nothing drops the standby from
   * the synchronous set). `lose` says how: the commit's backend ended from outside, which
   * PostgreSQL turns into a local-only commit, or the gateway's connection broken under it, as a
   * network would. `then` runs while the senders are still held.
   */
  async function loseCommitWhileStandbyDeaf(
    lost: { id: number; lose: 'backend' | 'connection' },
    then: (ctx: {
      round: Promise<unknown>;
      endWaiter: (query: string) => Promise<unknown>;
      fenceWaiting: () => Promise<unknown>;
      /** Whether the row is visible on the primary, to a session of its own. */
      seenOnPrimary: () => Promise<boolean>;
      primary: NodeName;
      standby: NodeName;
      release: () => Promise<void>;
    }) => Promise<void>,
  ): Promise<void> {
    const clients: pg.PoolClient[] = [];
    await withStandbyDeaf(
      { application: 'ha-lost', onConnect: (client) => clients.push(client) },
      async ({ pool, admin, primary, standby, release }) => {
        const waiting = (query: string, end: boolean) =>
          waitingForStandby(admin, { application: 'ha-lost', query, end });
        const seenOnPrimary = async () =>
          (await admin.query('SELECT 1 FROM acks WHERE id = $1', [lost.id])).rowCount === 1;
        const round = withOneRoundTrip(pool, [
          { text: 'INSERT INTO acks (id) VALUES ($1)', values: [lost.id] },
        ]);
        round.catch(() => undefined);
        const pid = await waiting('INSERT INTO acks', lost.lose === 'backend');
        if (lost.lose === 'connection') {
          const client = clients.find(
            (c) => (c as unknown as { processID: number }).processID === pid,
          );
          (
            client as unknown as { connection: { stream: { destroy(): void } } }
          ).connection.stream.destroy();
        }
        await then({
          round,
          endWaiter: (query) => waiting(query, true),
          fenceWaiting: () => waiting('payments-gateway.fence', false),
          seenOnPrimary,
          primary,
          standby,
          release,
        });
      },
    );
  }

  /**
   * The fence went through: the round trip failed with its own error (the caller may read
   * back), not as unconfirmed, and the standby holds the lost commit.
   */
  async function expectSettledOnStandby(
    round: Promise<unknown>,
    standby: NodeName,
    id: number,
  ): Promise<void> {
    const error = await round.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).not.toBeNull();
    expect(error).not.toBeInstanceOf(CommitUnconfirmedError);
    await waitUntil(async () => (await idsOn(standby, [id])).size === 1, {
      timeoutMs: 10_000,
      what: 'the lost commit on the standby',
    });
  }

  it('settles a lost commit only once the standby has it', async () => {
    await loseCommitWhileStandbyDeaf(
      { id: 777_001, lose: 'backend' },
      async ({ round, fenceWaiting, standby, release }) => {
        // The ended commit is on the primary, and the fence waits for the standby to have it.
        await fenceWaiting();
        await release();
        await expectSettledOnStandby(round, standby, 777_001);
      },
    );
  }, 60_000);

  it('keeps a lost connection’s commit unseen while it waits for the standby', async () => {
    await loseCommitWhileStandbyDeaf(
      { id: 777_003, lose: 'connection' },
      async ({ round, fenceWaiting, seenOnPrimary, standby, release }) => {
        // The gateway ends the lost session before it reads back, but not one whose commit
        // waits for the standby: ended, that commit would be visible on the primary alone.
        await fenceWaiting();
        expect(await seenOnPrimary()).toBe(false);
        await release();
        await expectSettledOnStandby(round, standby, 777_003);
        expect(await seenOnPrimary()).toBe(true);
      },
    );
  }, 60_000);

  it('reports a lost commit unconfirmed, not settled, when its fence cannot prove it replicated', async () => {
    await loseCommitWhileStandbyDeaf(
      { id: 777_002, lose: 'backend' },
      async ({ round, endWaiter, primary, standby }) => {
        await endWaiter('payments-gateway.fence');
        await expect(round).rejects.toBeInstanceOf(CommitUnconfirmedError);
        // What a read-back would have found: the ended commit, on the primary alone.
        expect(await idsOn(primary, [777_002])).toEqual(new Set([777_002]));
        expect(await idsOn(standby, [777_002])).toEqual(new Set());
      },
    );
  }, 60_000);

  /**
   * A commit on the primary alone and visible there, as a switchover's first moments leave one
   * on the old primary: its backend waited for the standby while the primary's WAL senders were
   * held, and was ended from outside. `then` runs while the senders are still held, with a pool
   * on the primary whose sessions are named `ha-read-back`.
   */
  async function withLocalOnlyCommit(
    id: number,
    then: (ctx: {
      pool: pg.Pool;
      primary: NodeName;
      standby: NodeName;
      /** The pid of an `ha-read-back` session waiting for the standby, ended when `end`. */
      waiter: (query: string, end: boolean) => Promise<number>;
      release: () => Promise<void>;
    }) => Promise<void>,
  ): Promise<void> {
    await withStandbyDeaf(
      { application: 'ha-read-back' },
      async ({ pool, admin, primary, standby, release }) => {
        const writer = new pg.Client({
          connectionString: formation.nodeUrl(primary),
          application_name: 'ha-local-only',
        });
        writer.on('error', () => undefined);
        await writer.connect();
        try {
          const insert = writer.query('INSERT INTO acks (id) VALUES ($1)', [id]);
          insert.catch(() => undefined);
          await waitingForStandby(admin, {
            application: 'ha-local-only',
            query: 'INSERT INTO acks',
            end: true,
          });
          await waitUntil(
            async () =>
              (await admin.query('SELECT 1 FROM acks WHERE id = $1', [id])).rowCount === 1,
            { timeoutMs: 10_000, what: 'the ended commit, visible on the primary alone' },
          );
          const waiter = (query: string, end: boolean) =>
            waitingForStandby(admin, { application: 'ha-read-back', query, end });
          await then({ pool, primary, standby, waiter, release });
        } finally {
          await writer.end().catch(() => undefined);
        }
      },
    );
  }

  const readBack = (pool: pg.Pool, id: number) =>
    readBackDurably<{ id: number }>(pool, {
      text: 'SELECT id FROM acks WHERE id = $1',
      values: [id],
    });

  it('reads a lost commit back only once the standby of the server it read from has it', async () => {
    await withLocalOnlyCommit(777_004, async ({ pool, standby, waiter, release }) => {
      // A plain read finds the commit: settling from it would acknowledge what a failover undoes.
      expect((await pool.query('SELECT 1 FROM acks WHERE id = 777004')).rowCount).toBe(1);
      let settled = false;
      const read = readBack(pool, 777_004).finally(() => (settled = true));
      read.catch(() => undefined);
      // The read's own fence waits for the standby, on the read's connection, and holds the rows.
      await waiter("'read-back'", false);
      expect(settled).toBe(false);
      expect(await idsOn(standby, [777_004])).toEqual(new Set());
      await release();
      expect(await read).toEqual([{ id: 777_004 }]);
      expect(await idsOn(standby, [777_004])).toEqual(new Set([777_004]));
    });
  }, 60_000);

  it('reports a read-back unconfirmed when its own fence cannot prove the standby has it', async () => {
    await withLocalOnlyCommit(777_005, async ({ pool, primary, standby, waiter }) => {
      const read = readBack(pool, 777_005);
      read.catch(() => undefined);
      // The read's fence ended while it waits; then the lost session's fence that follows.
      await waiter("'read-back'", true);
      await waiter("'payments-gateway.fence', ''", true);
      await expect(read).rejects.toBeInstanceOf(CommitUnconfirmedError);
      expect(await idsOn(primary, [777_005])).toEqual(new Set([777_005]));
      expect(await idsOn(standby, [777_005])).toEqual(new Set());
    });
  }, 60_000);
});
