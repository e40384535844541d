import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Queryable } from '../../lib/db/pool.ts';
import {
  delayAfterOutboxRun,
  outboxRetentionJob,
  pruneOutbox,
  type OutboxPruned,
  type OutboxRetentionPolicy,
} from '../../lib/outbox/outbox-retention.ts';
import { createLibMetrics, createMetricsRegistry } from '../../lib/metrics.ts';
import { createOutboxRetention, type OutboxRetention } from '../../app/outbox-retention-job.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { useTestStackOn } from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';

const database = useTestDatabase('outbox-retention');
// The app's own run (its policy from OUTBOX_RETENTION_SECONDS, its metric); no job runs by itself.
const stack = useTestStackOn(database, { app: { outboxRetentionSeconds: 30 * 86_400 } });
const TENANT = '00000000-0000-4000-8000-00000000000a';
const DAY_SECONDS = 86_400;
const POLICY: OutboxRetentionPolicy = {
  retentionSeconds: 30 * DAY_SECONDS,
  batchSize: 100,
  budgetMs: 60_000,
};

let db: pg.Pool;
beforeAll(() => {
  db = new pg.Pool({ connectionString: database.url, max: 2 });
});
afterAll(async () => {
  await db.end();
});
beforeEach(async () => {
  await db.query(
    'TRUNCATE outbox_deliveries, outbox_events, inbox_messages, outbox_consumer_circuits',
  );
  await db.query(`UPDATE outbox_cursors SET written_by = '0', log_seq = 0`);
});

/** An event written `daysAgo` days ago, read from the log by `logConsumers`. */
async function event(
  id: string,
  opts: {
    daysAgo: number;
    logConsumers?: string[];
    delivery?: 'pending' | 'delivered';
    consumer?: string;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO outbox_events (tenant_id, id, type, payload, log_consumers, created_at)
     VALUES ($1, $2, 'payment.succeeded', '{}', $3, now() - make_interval(days => $4))`,
    [TENANT, id, opts.logConsumers ?? [], opts.daysAgo],
  );
  if (opts.delivery !== undefined) {
    await db.query(
      `INSERT INTO outbox_deliveries (tenant_id, event_id, consumer, status)
       VALUES ($1, $2, $3, $4)`,
      [TENANT, id, opts.consumer ?? 'webhook:endpoint-1', opts.delivery],
    );
  }
}

async function idsOf(table: 'outbox_events' | 'outbox_deliveries'): Promise<string[]> {
  const column = table === 'outbox_events' ? 'id' : 'event_id';
  const { rows } = await db.query<{ id: string }>(
    `SELECT ${column} AS id FROM ${table} ORDER BY 1`,
  );
  return rows.map((r) => r.id);
}

/** Moves `consumer`'s cursor onto event `id`: it has taken it, and everything before it. */
async function cursorAt(consumer: string, id: string): Promise<void> {
  await db.query(
    `UPDATE outbox_cursors c SET written_by = e.written_by, log_seq = e.log_seq
       FROM outbox_events e WHERE c.consumer = $1 AND e.id = $2`,
    [consumer, id],
  );
}

/** `count` events past the window, with no deliveries. */
async function oldEvents(count: number): Promise<void> {
  await db.query(
    `INSERT INTO outbox_events (tenant_id, id, type, payload, created_at)
     SELECT $1, 'evt_' || n, 'payment.succeeded', '{}', now() - interval '40 days'
       FROM generate_series(1, $2) AS n`,
    [TENANT, count],
  );
}

/** A circuit of `consumer` with some failures on record, open until `openUntil` (SQL). */
async function circuit(consumer: string, openUntil: string): Promise<void> {
  await db.query(
    `INSERT INTO outbox_consumer_circuits (tenant_id, consumer, failures, open_until)
     VALUES ($1, $2, 5, ${openUntil})`,
    [TENANT, consumer],
  );
}

async function circuits(): Promise<string[]> {
  const { rows } = await db.query<{ consumer: string }>(
    'SELECT consumer FROM outbox_consumer_circuits ORDER BY 1',
  );
  return rows.map((r) => r.consumer);
}

describe('outbox retention', () => {
  it('deletes events past the window with their finished deliveries, and keeps the rest', async () => {
    await event('evt_old_delivered', { daysAgo: 40, delivery: 'delivered' });
    await event('evt_old_no_delivery', { daysAgo: 40 });
    await event('evt_old_pending', { daysAgo: 40, delivery: 'pending' });
    await event('evt_recent', { daysAgo: 2, delivery: 'delivered' });

    const pruned = await pruneOutbox(db, POLICY);

    expect(pruned).toEqual({
      events: 2,
      deliveries: 1,
      inboxMessages: 0,
      circuits: 0,
      complete: true,
      next: 'events',
    });
    expect(await idsOf('outbox_events')).toEqual(['evt_old_pending', 'evt_recent']);
    expect(await idsOf('outbox_deliveries')).toEqual(['evt_old_pending', 'evt_recent']);
  });

  it('keeps an event until every consumer reading it from the log has taken it', async () => {
    await event('evt_a', { daysAgo: 40, logConsumers: ['ledger', 'receipts'] });
    await event('evt_b', { daysAgo: 40, logConsumers: ['ledger', 'receipts'] });

    expect((await pruneOutbox(db, POLICY)).events).toBe(0);
    await cursorAt('ledger', 'evt_b');
    await cursorAt('receipts', 'evt_a');
    expect((await pruneOutbox(db, POLICY)).events).toBe(1);
    expect(await idsOf('outbox_events')).toEqual(['evt_b']);
    await cursorAt('receipts', 'evt_b');
    expect((await pruneOutbox(db, POLICY)).events).toBe(1);
    expect(await idsOf('outbox_events')).toEqual([]);
  });

  it('deletes inbox rows past the window only', async () => {
    await db.query(
      `INSERT INTO inbox_messages (consumer, tenant_id, message_id, processed_at)
       VALUES ('ledger', $1, 'evt_old', now() - interval '40 days'),
              ('ledger', $1, 'evt_new', now() - interval '1 day')`,
      [TENANT],
    );
    expect((await pruneOutbox(db, POLICY)).inboxMessages).toBe(1);
    const { rows } = await db.query<{ message_id: string }>(
      'SELECT message_id FROM inbox_messages',
    );
    expect(rows.map((r) => r.message_id)).toEqual(['evt_new']);
  });

  it('deletes a circuit that guards nothing, and keeps one with a delivery pending or open', async () => {
    // A circuit outlives its deliveries when its process stopped before deleting it.
    await event('evt_to_1', { daysAgo: 1, delivery: 'pending', consumer: 'webhook:endpoint-1' });
    await event('evt_to_2', { daysAgo: 1, delivery: 'delivered', consumer: 'webhook:endpoint-2' });
    await circuit('webhook:endpoint-1', "'-infinity'");
    await circuit('webhook:endpoint-2', "now() - interval '1 minute'");
    await circuit('webhook:endpoint-3', "now() + interval '1 hour'");
    await circuit('webhook:endpoint-4', "'-infinity'");

    expect((await pruneOutbox(db, POLICY)).circuits).toBe(2);
    expect(await circuits()).toEqual(['webhook:endpoint-1', 'webhook:endpoint-3']);
    // Once its delivery is no longer pending and its wait is over, each goes too.
    await db.query(`UPDATE outbox_deliveries SET status = 'abandoned'`);
    await db.query(`UPDATE outbox_consumer_circuits SET open_until = now()`);
    expect((await pruneOutbox(db, POLICY)).circuits).toBe(2);
    expect(await circuits()).toEqual([]);
  });

  it('works in batches until done, and stops when its budget is spent', async () => {
    await oldEvents(250);
    // Its first batch always runs, so that every run gets somewhere.
    expect(await pruneOutbox(db, { ...POLICY, budgetMs: 0 })).toEqual({
      events: 100,
      deliveries: 0,
      inboxMessages: 0,
      circuits: 0,
      complete: false,
      next: 'events',
    });
    expect(await pruneOutbox(db, POLICY)).toEqual({
      events: 150,
      deliveries: 0,
      inboxMessages: 0,
      circuits: 0,
      complete: true,
      next: 'events',
    });
  });

  it('starts at the stage it is given, and says where its budget stopped it', async () => {
    await oldEvents(150);
    await db.query(
      `INSERT INTO inbox_messages (consumer, tenant_id, message_id, processed_at)
       SELECT 'ledger', $1, 'evt_' || n, now() - interval '40 days' FROM generate_series(1, 150) n`,
      [TENANT],
    );
    await circuit('webhook:endpoint-1', "'-infinity'");
    const budgetSpent = { ...POLICY, budgetMs: 0 };
    expect(await pruneOutbox(db, budgetSpent, { from: 'inbox' })).toMatchObject({
      events: 0,
      inboxMessages: 100,
      complete: false,
      next: 'inbox',
    });
    // The inbox comes back short: on to the circuits, without a look at the events.
    expect(await pruneOutbox(db, POLICY, { from: 'inbox' })).toMatchObject({
      events: 0,
      inboxMessages: 50,
      circuits: 1,
      complete: true,
      next: 'events',
    });
    expect((await idsOf('outbox_events')).length).toBe(150);
  });

  it('hears of each batch as it commits, so a run that fails later still counts it', async () => {
    await oldEvents(250);
    let statements = 0;
    const failsThird: Queryable = {
      query: async (text, values) => {
        if (++statements === 3) throw new Error('connection lost');
        return db.query(text, values);
      },
    };
    const batches: number[] = [];
    await expect(
      pruneOutbox(failsThird, POLICY, { onBatch: (rows) => batches.push(rows.events) }),
    ).rejects.toThrow('connection lost');
    expect(batches).toEqual([100, 100]);
    expect((await idsOf('outbox_events')).length).toBe(50);
  });

  it('runs again after a pause, not an interval, until a run leaves nothing past the window', async () => {
    await oldEvents(200);
    // Every statement takes at least 15 ms, as on a slow database: a run of a 20 ms budget holds
    // at most two batches of 50, on any machine, so the backlog takes several runs, and no run
    // gets through all three stages unless it starts where the last one stopped. The interval is
    // longer than the test.
    const policy: OutboxRetentionPolicy = { ...POLICY, batchSize: 50, budgetMs: 20 };
    const slow: Queryable = {
      query: async (text, values) => {
        await sleep(15);
        return db.query(text, values);
      },
    };
    const runs: OutboxPruned[] = [];
    const failures: unknown[] = [];
    const job = outboxRetentionJob(
      (from) =>
        pruneOutbox(slow, policy, { from }).then((pruned) => {
          runs.push(pruned);
          return pruned;
        }),
      { policy, intervalMs: 3_600_000, onError: (error) => failures.push(error) },
    );
    job.start(0);
    try {
      await waitUntil(() => runs.at(-1)?.complete === true || failures.length > 0, {
        timeoutMs: 50_000,
        intervalMs: 50,
        what: 'a run of outbox retention that leaves nothing behind',
      });
      // Once a run has completed, the next waits the interval: none comes after the pause.
      await sleep(1_500);
    } finally {
      await job.stop();
    }
    expect(failures).toEqual([]);
    expect(runs.at(-1)?.complete).toBe(true);
    expect(runs.length).toBeGreaterThan(2);
    expect(runs.slice(0, -1).map((run) => run.complete)).not.toContain(true);
    expect(runs.reduce((sum, run) => sum + run.events, 0)).toBe(200);
    expect(await idsOf('outbox_events')).toEqual([]);
  });

  it('waits the interval after a complete or failed run, and a pause of its budget while behind', () => {
    const opts = { policy: POLICY, intervalMs: 600_000 };
    const ran = (complete: boolean): OutboxPruned => ({
      events: 0,
      deliveries: 0,
      inboxMessages: 0,
      circuits: 0,
      complete,
      next: 'events',
    });
    expect(delayAfterOutboxRun(ran(true), opts)).toBe(600_000);
    expect(delayAfterOutboxRun(undefined, opts)).toBe(600_000);
    expect(delayAfterOutboxRun(ran(false), opts)).toBe(POLICY.budgetMs);
    // Never a spin, and never longer than the interval.
    expect(delayAfterOutboxRun(ran(false), { ...opts, policy: { ...POLICY, budgetMs: 0 } })).toBe(
      1_000,
    );
    expect(delayAfterOutboxRun(ran(false), { ...opts, intervalMs: 5_000 })).toBe(5_000);
  });

  it('leaves alone a delivery that turns pending while its batch runs, and its event', async () => {
    await event('evt_redelivered', { daysAgo: 40, delivery: 'delivered' });
    // A redelivery asked for at that moment: its transaction holds the delivery row.
    const redelivery = await db.connect();
    try {
      await redelivery.query('BEGIN');
      await redelivery.query(
        `UPDATE outbox_deliveries SET status = 'pending' WHERE event_id = 'evt_redelivered'`,
      );
      const pruning = pruneOutbox(db, POLICY);
      // Committed once the prune waits on the delivery row, not after a guess at when it does.
      // Asked on the redelivery's own connection: the pool's two are both taken. pg_locks is
      // read live, not from the statistics snapshot a transaction keeps.
      await waitUntil(
        async () =>
          (
            await redelivery.query<{ blocked: boolean }>(
              `SELECT EXISTS (SELECT FROM pg_locks
                               WHERE NOT granted AND pg_backend_pid() = ANY (pg_blocking_pids(pid)))
                        AS blocked`,
            )
          ).rows[0]!.blocked,
        { timeoutMs: 10_000, intervalMs: 10, what: 'the prune to wait on the redelivery' },
      );
      // The prune's refusal can arrive before the COMMIT's own answer does: it is expected
      // before the COMMIT is sent, so it never lands on a promise that nothing awaits yet.
      const refused = expect(pruning).rejects.toThrow(/foreign key/);
      await redelivery.query('COMMIT');
      await refused;
    } finally {
      redelivery.release();
    }
    expect(await idsOf('outbox_events')).toEqual(['evt_redelivered']);
    expect(await idsOf('outbox_deliveries')).toEqual(['evt_redelivered']);
    expect((await pruneOutbox(db, POLICY)).events).toBe(0);
  });

  it("is the app's job too, which counts what it deleted by table", async () => {
    await event('evt_app_old', { daysAgo: 40, delivery: 'delivered' });
    await event('evt_app_recent', { daysAgo: 2 });
    await circuit('webhook:endpoint-gone', "'-infinity'");

    expect(await stack.app.services.pruneOutbox()).toEqual({
      events: 1,
      deliveries: 1,
      inboxMessages: 0,
      circuits: 1,
      complete: true,
      next: 'events',
    });
    expect(await idsOf('outbox_events')).toEqual(['evt_app_recent']);
    const text = await (await fetch(`${stack.app.url}/metrics`)).text();
    expect(text).toMatch(
      /outbox_retention_deleted_rows_total\{[^}]*table="outbox_events"[^}]*\} 1\b/,
    );
    expect(text).toMatch(
      /outbox_retention_deleted_rows_total\{[^}]*table="outbox_deliveries"[^}]*\} 1\b/,
    );
    expect(text).toMatch(
      /outbox_retention_deleted_rows_total\{[^}]*table="outbox_consumer_circuits"[^}]*\} 1\b/,
    );
    expect(text).toMatch(/outbox_retention_runs_total\{[^}]*result="complete"[^}]*\} 1\b/);
    expect(text).toMatch(/outbox_retention_runs_total\{[^}]*result="budget_spent"[^}]*\} 0\b/);
  });

  it('fails a batch that waits on a row lock past its timeout, and counts the run as an error', async () => {
    await event('evt_held', { daysAgo: 40, delivery: 'delivered' });
    const { retention, metrics } = appRetention();
    // A session left idle in a transaction that holds the delivery row.
    await failsWhileHeld(
      retention,
      `SELECT 1 FROM outbox_deliveries WHERE event_id = 'evt_held' FOR UPDATE`,
    );
    const text = await metrics();
    expect(text).toMatch(/outbox_retention_runs_total\{[^}]*result="error"[^}]*\} 1\b/);
    expect(text).not.toMatch(/result="complete"/);
    expect(await idsOf('outbox_events')).toEqual(['evt_held']);
  });

  it('counts the rows a run deleted before one of its batches failed', async () => {
    await event('evt_gone', { daysAgo: 40, delivery: 'delivered' });
    const { retention, metrics } = appRetention();
    // The events' and the inbox's batches commit; the circuits' waits on the table and fails.
    await failsWhileHeld(retention, 'LOCK TABLE outbox_consumer_circuits IN ACCESS EXCLUSIVE MODE');
    expect(await idsOf('outbox_events')).toEqual([]);
    const text = await metrics();
    expect(text).toMatch(/outbox_retention_runs_total\{[^}]*result="error"[^}]*\} 1\b/);
    expect(text).toMatch(
      /outbox_retention_deleted_rows_total\{[^}]*table="outbox_events"[^}]*\} 1\b/,
    );
    expect(text).toMatch(
      /outbox_retention_deleted_rows_total\{[^}]*table="outbox_deliveries"[^}]*\} 1\b/,
    );
  });
});

/**
 * The app's outbox retention on a registry of its own. Its statement timeout is what the lock
 * waits run into, and far longer than any batch that waits on nothing takes on a loaded machine.
 */
function appRetention(): { retention: OutboxRetention; metrics: () => Promise<string> } {
  const registry = createMetricsRegistry({ defaultMetrics: false });
  const retention = createOutboxRetention({
    databaseUrl: database.url,
    policy: POLICY,
    intervalMs: 3_600_000,
    statementTimeoutMs: 3_000,
    metrics: createLibMetrics(registry),
    service: 'gateway',
    onError: () => {},
  });
  return { retention, metrics: () => registry.metrics() };
}

/** Runs `retention` once while another session holds the lock `lockSql` takes; it must time out. */
async function failsWhileHeld(retention: OutboxRetention, lockSql: string): Promise<void> {
  const holder = await db.connect();
  try {
    await holder.query('BEGIN');
    await holder.query(lockSql);
    await expect(retention.runOnce()).rejects.toThrow(/statement timeout/);
  } finally {
    await holder.query('ROLLBACK');
    holder.release();
    await retention.close();
  }
}
