/**
 * `npm run bench:outbox`: whether the outbox keeps up. One gateway in this process (background
 * work on, as `npm start` runs it) on a scratch database, a bounded burst of new payments at
 * concurrency 16 through GraphQL, then: the outbox backlog the moment the burst ends, in
 * deliveries and in seconds of the burst's own rate, and how long the dispatcher takes to
 * drain it, where the WAL of the burst and drain went (wal-census.ts), and what the gateway
 * costs PostgreSQL once idle again. Every process is stopped and the database dropped; traffic goes to 127.0.0.1 only.
 *
 *   npm run bench:outbox -- [--payments N] (default 3000) [--warm N] (default 0)
 *                            [--keys sequential|uuid] (default sequential)
 *                            [--wal-compression off|pglz|lz4|zstd] (default: the server's)
 *
 * `--warm N` first sends N payments, waits for their drain and runs a CHECKPOINT, as the
 * independent harness does before each phase: the measured burst then writes into pages that
 * already exist, and its WAL counts the full-page image of each page it is first to change.
 * Without it every page is new and no full-page image is written, which flatters the census.
 *
 * `--keys` is how the idempotency keys look, which decides where their index takes each insert:
 * `sequential`, each burst its own prefix and its keys numbered within it, as the independent
 * harness sends them (the inserts of a burst land side by side); `uuid`, a random UUID each, as
 * merchants are told to send them (each insert lands on a page of its own, and after a
 * checkpoint that page's first change logs all of it).
 *
 * `--wal-compression` sets PostgreSQL's wal_compression for the scratch database alone (a
 * superuser's setting): it compresses full-page images, the part of the WAL random keys make.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { startApp } from '../app/app.ts';
import { Keyring } from '../lib/crypto/keyring.ts';
import { upsertTenant } from '../services/tenants/api-keys.ts';
import { startSandboxPsp } from '../sandbox-psp/sandbox-server.ts';
import { benchPool, createScratchDatabase } from './bench/scratch-database.ts';
import { DRAIN_LIMIT_SECONDS, outboxBacklog, waitForDrain } from './bench/outbox-backlog.ts';
import { walCensus, walPosition, type WalCensus } from './bench/wal-census.ts';
import { addCosts, Costs, snapshotCosts } from './bench/phase-costs.ts';
import type pg from 'pg';
import { table } from '../ops/render.ts';

const CONCURRENCY = 16;
const API_KEY = 'sk_test_outbox_bench_000000000000';
const CREATE = `mutation($i: CreatePaymentInput!) { createPayment(input: $i) { payment { id } } }`;

const { values } = parseArgs({
  options: {
    payments: { type: 'string', default: '3000' },
    warm: { type: 'string', default: '0' },
    keys: { type: 'string', default: 'sequential' },
    'wal-compression': { type: 'string' },
  },
});
const walCompression = values['wal-compression'];
if (walCompression !== undefined && !['off', 'pglz', 'lz4', 'zstd'].includes(walCompression))
  throw new Error('--wal-compression must be off, pglz, lz4 or zstd');
if (values.keys !== 'sequential' && values.keys !== 'uuid')
  throw new Error('--keys must be sequential or uuid');
const payments = Number(values.payments);
if (!Number.isInteger(payments) || payments < 1 || payments > 100_000)
  throw new Error('--payments must be a whole number from 1 to 100000');
const warm = Number(values.warm);
if (!Number.isInteger(warm) || warm < 0 || warm > 100_000)
  throw new Error('--warm must be a whole number from 0 to 100000');

/** The idempotency key of the burst's `n`th payment (`--keys`). */
function keyOf(burstName: string, n: number): string {
  return values.keys === 'uuid' ? randomUUID() : `outbox-${burstName}-${n}`;
}

/** Sends `count` payments at CONCURRENCY, each with its own key. */
async function burst(http: Pool, name: string, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const n = next++;
        const body = JSON.stringify({
          query: CREATE,
          variables: {
            i: {
              idempotencyKey: keyOf(name, n),
              amount: '10.00',
              currency: 'EUR',
              paymentMethod: 'pm_card_visa',
            },
          },
        });
        const answer = await http.request({
          method: 'POST',
          path: '/graphql',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` },
          body,
        });
        await answer.body.dump();
        if (answer.statusCode !== 200) throw new Error(`HTTP ${answer.statusCode}`);
      }
    }),
  );
}

/** Deliveries written so far: a delivery row, or a log consumer's name in its event. */
async function deliveriesWritten(db: pg.Pool): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT ((SELECT count(*) FROM outbox_deliveries)
           + (SELECT COALESCE(sum(cardinality(log_consumers)), 0) FROM outbox_events))::int AS n`,
  );
  return rows[0]?.n ?? 0;
}

/** The WAL of the burst and its drain, per payment, by relation: what each statement kind costs. */
function printWalCensus(census: WalCensus | null, payments: number): void {
  if (census === null) {
    console.log('WAL census: skipped (pg_walinspect needs PostgreSQL 15+ and a superuser)');
    return;
  }
  const kb = (bytes: number) => (bytes / 1024 / payments).toFixed(3);
  console.log(
    `WAL per payment, burst and drain: ${kb(census.totalBytes)} KB, of which full-page images ${kb(census.fpiBytes)} KB`,
  );
  const out = table(['relation', 'KB per payment', 'of which full pages', 'records per payment'], {
    compact: true,
  });
  for (const t of census.byTarget.slice(0, 25)) {
    out.push([t.target, kb(t.bytes), kb(t.fpiBytes), (t.records / payments).toFixed(2)]);
  }
  console.log(out.toString());
}

/** Seconds the idle gateway is watched. */
const IDLE_SECONDS = 30;
/**
 * The wait before watching: for the dispatcher's claims to back off, and for the burst's
 * transactions to reach pg_stat_database, which an idle backend publishes only after 10 s.
 */
const SETTLE_MS = 12_000;

/**
 * What the gateway costs PostgreSQL with nothing to do: its backends' CPU, and the transactions
 * its database ran (pg_stat_database, which backends publish about once a second while busy, so
 * the count is a floor), less the two this bench's own snapshots ran.
 */
async function measureIdle(db: pg.Pool, dbName: string): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const pids = { system: process.pid, psp: process.pid };
  const transactions = async () => {
    const { rows } = await db.query<{ n: string }>(
      `SELECT (xact_commit + xact_rollback)::text AS n FROM pg_stat_database WHERE datname = $1`,
      [dbName],
    );
    return Number(rows[0]?.n);
  };
  const before = { costs: await snapshotCosts({ db, dbName, pids }), xacts: await transactions() };
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  const after = { costs: await snapshotCosts({ db, dbName, pids }), xacts: await transactions() };
  const idle = new Costs();
  addCosts(idle, before.costs, after.costs);
  const perSecond = (value: number) => (value / IDLE_SECONDS).toFixed(2);
  console.log(
    `idle for ${IDLE_SECONDS} s: PostgreSQL CPU ${perSecond(idle.postgresMs)} ms a second; at least ${perSecond(after.xacts - before.xacts - 2)} transactions a second`,
  );
}

const database = await createScratchDatabase();
const db = benchPool(database.url);
if (walCompression !== undefined) {
  // Read by each new session: set before the gateway opens its pool.
  await db.query(`ALTER DATABASE ${database.name} SET wal_compression = ${walCompression}`);
}
const sandbox = await startSandboxPsp({});
const keyring = Keyring.parse(`bench:${Buffer.alloc(32, 7).toString('base64')}`);
try {
  await upsertTenant(db, keyring, { name: 'outbox-bench', apiKey: API_KEY });
  const app = await startApp({
    databaseUrl: database.url,
    pspUrl: sandbox.url,
    internalToken: 'itok_outbox_bench_0000000000',
    keyring,
    leaseMs: 30_000,
    ttlSeconds: 86_400,
    recoveryIntervalMs: 5_000,
    providerTimeoutMs: 5_000,
    logLevel: 'silent',
  });
  const http = new Pool(app.url, { connections: CONCURRENCY });
  try {
    if (warm > 0) {
      await burst(http, 'warm', warm);
      await waitForDrain(db);
      await db.query('CHECKPOINT');
    }
    const deliveriesBefore = await deliveriesWritten(db);
    const walFrom = await walPosition(db);
    const started = performance.now();
    await burst(http, 'measured', payments);
    const burstSeconds = (performance.now() - started) / 1000;
    const rate = payments / burstSeconds;
    const atEnd = await outboxBacklog(db);
    // One second of traffic is the deliveries a second of the burst wrote (a payment writes
    // one per consumer it has: a delivery row, or its name in the event for a log consumer),
    // not its payments.
    const deliveryRate = ((await deliveriesWritten(db)) - deliveriesBefore) / burstSeconds;
    const drainMs = await waitForDrain(db);
    console.log(
      `burst: ${payments} payments in ${burstSeconds.toFixed(1)} s (${rate.toFixed(0)}/s)`,
    );
    console.log(
      `backlog when the burst ended: ${atEnd.pending} deliveries = ${(atEnd.pending / deliveryRate).toFixed(2)} s of the burst's deliveries (${deliveryRate.toFixed(0)}/s); oldest pending ${atEnd.oldestAgeSeconds.toFixed(2)} s`,
    );
    console.log(
      drainMs === null
        ? `not drained after ${DRAIN_LIMIT_SECONDS} s`
        : `drained in ${(drainMs / 1000).toFixed(1)} s`,
    );
    printWalCensus(await walCensus(db, walFrom), payments);
    await measureIdle(db, database.name);
  } finally {
    await http.close();
    await app.stop();
  }
} finally {
  await sandbox.close();
  await db.end();
  await database.drop();
}
