/**
 * `npm run bench`: createPayment through the whole product path (HTTP → GraphQL → tRPC →
 * PostgreSQL → sandbox provider), gateway and provider as their own processes, load from this
 * one. Prints throughput and latency for new keys and for replays at a fixed concurrency, the
 * PostgreSQL commits and writing transactions per new payment, and — measured in the same run
 * on the same server — PostgreSQL's own single-row commit rate and indexed-read rate as
 * baselines. Ratios only; no absolute claim is asserted anywhere.
 *
 *   npm run bench -- [--concurrency 16] [--requests 3000]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { migrateDatabase } from '../migrations/migrate.ts';
import {
  externalServer,
  findFreePort,
  isServerAnswering,
  startEmbeddedServer,
  type DatabaseServer,
} from '../services/kernel/db/database-server.ts';

const { values: args } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '16' },
    requests: { type: 'string', default: '3000' },
  },
});
const CONCURRENCY = Number(args.concurrency);
const REQUESTS = Number(args.requests);
/** Every load phase stops after this long even if its request count is not reached. */
const PHASE_TIME_LIMIT_MS = 60_000;
/** PostgreSQL flushes a backend's statistics at most once a second; wait that out before reading. */
const STATS_FLUSH_WAIT_MS = 1_500;
const API_KEY = `sk_test_bench_${randomBytes(12).toString('hex')}`;
const MUTATION = `mutation($i: CreatePaymentInput!) { createPayment(input: $i) { payment { id status } idempotency { replayed } } }`;

interface PhaseResult {
  name: string;
  done: number;
  seconds: number;
  latenciesMs: number[];
}

async function main(): Promise<void> {
  const server = await openServer();
  const dbName = `pgw_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  const databaseUrl = server.urlFor(dbName);
  const children: ChildProcess[] = [];
  try {
    await migrateDatabase(databaseUrl);
    const pspPort = await findFreePort();
    children.push(spawnChild('sandbox-psp/main.ts', { SANDBOX_PSP_PORT: String(pspPort) }));
    const gateway = spawnChild('src/main.ts', {
      DATABASE_URL: databaseUrl,
      PSP_URL: `http://127.0.0.1:${pspPort}`,
      PORT: '0',
      BOOTSTRAP_TENANTS: `bench:${API_KEY}`,
      RECOVERY_INTERVAL_MS: '3600000',
      // The request path alone: events wait in the outbox while the load runs, and their
      // delivery (ledger postings, receipts, webhooks) is measured on its own afterwards.
      OUTBOX_INTERVAL_MS: '3600000',
    });
    children.push(gateway);
    const url = await readyUrl(gateway);
    const db = new pg.Pool({ connectionString: databaseUrl, max: CONCURRENCY });

    await load('warm-up', { url, count: 300, input: (i) => input(`warm-${i}`) });
    const before = await counters(db, dbName);
    const fresh = await load('new keys', { url, count: REQUESTS, input: (i) => input(`new-${i}`) });
    const after = await counters(db, dbName);
    const replays = await load('replays', {
      url,
      count: REQUESTS,
      input: (i) => input(`new-${i % 500}`),
    });
    const afterReplays = await counters(db, dbName);

    const commitRate = await postgresBaseline(db, {
      name: 'PostgreSQL single-row INSERT commits',
      sql: 'INSERT INTO bench_commits (v) VALUES ($1)',
    });
    const readRate = await postgresBaseline(db, {
      name: 'PostgreSQL indexed read',
      sql: "SELECT state FROM idempotency_keys WHERE tenant_id = (SELECT id FROM tenants LIMIT 1) AND operation = $1::text AND key = 'new-1'",
    });
    await db.end();

    report({ fresh, replays, commitRate, readRate, counters: { before, after, afterReplays } });
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(
      children.map(
        (c) =>
          new Promise((resolve) => (c.exitCode !== null ? resolve(null) : c.once('exit', resolve))),
      ),
    );
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
    await server.stop();
  }
}

function input(key: string): Record<string, unknown> {
  return {
    idempotencyKey: key,
    amount: '10.00',
    currency: 'EUR',
    paymentMethod: 'pm_card_visa',
    reference: key,
  };
}

async function openServer(): Promise<DatabaseServer> {
  const configured = process.env['BENCH_DATABASE_URL'] ?? process.env['TEST_DATABASE_URL'];
  if (configured) return externalServer(configured);
  const local = `postgres://${process.env['PGUSER'] ?? 'root'}@127.0.0.1:5432/postgres`;
  if (await isServerAnswering(local, 1_000)) return externalServer(local);
  const dir = `/tmp/pgw-bench-${randomBytes(4).toString('hex')}`;
  return startEmbeddedServer({ dataDir: dir, port: await findFreePort(), persistent: false });
}

function spawnChild(entry: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', entry], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

async function readyUrl(gateway: ChildProcess): Promise<string> {
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /GraphQL:\s+(http:\/\/127\.0\.0\.1:\d+)\/graphql/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        // Keep draining the gateway's log lines (a full pipe would stall it) without keeping them.
        gateway.stdout?.off('data', onData);
        gateway.stdout?.on('data', () => undefined);
        resolve(match[1]);
      }
    };
    gateway.stdout?.on('data', onData);
  });
}

async function load(
  name: string,
  opts: { url: string; count: number; input: (i: number) => Record<string, unknown> },
): Promise<PhaseResult> {
  const latenciesMs: number[] = [];
  let next = 0;
  const started = performance.now();
  const deadline = started + PHASE_TIME_LIMIT_MS;
  const worker = async () => {
    while (next < opts.count && performance.now() < deadline) {
      const i = next++;
      const t0 = performance.now();
      const response = await fetch(`${opts.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` },
        body: JSON.stringify({ query: MUTATION, variables: { i: opts.input(i) } }),
      });
      const body = (await response.json()) as {
        data?: { createPayment?: { payment?: { status?: string } } };
      };
      if (body.data?.createPayment?.payment?.status !== 'SUCCEEDED')
        throw new Error(`${name}: ${JSON.stringify(body)}`);
      latenciesMs.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return {
    name,
    done: latenciesMs.length,
    seconds: (performance.now() - started) / 1000,
    latenciesMs,
  };
}

async function counters(db: pg.Pool, dbName: string): Promise<{ commits: number; xids: number }> {
  await new Promise((resolve) => setTimeout(resolve, STATS_FLUSH_WAIT_MS));
  const { rows } = await db.query<{ commits: string; xids: string }>(
    `SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = $1)::text AS commits,
            pg_snapshot_xmax(pg_current_snapshot())::text AS xids`,
    [dbName],
  );
  return { commits: Number(rows[0]?.commits), xids: Number(rows[0]?.xids) };
}

async function postgresBaseline(
  db: pg.Pool,
  opts: { name: string; sql: string },
): Promise<PhaseResult> {
  await db.query(
    'CREATE TABLE IF NOT EXISTS bench_commits (id bigserial PRIMARY KEY, v text NOT NULL)',
  );
  const latenciesMs: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < REQUESTS) {
      const i = next++;
      const t0 = performance.now();
      await db.query(opts.sql, [opts.sql.startsWith('INSERT') ? `v${i}` : 'payments.create.v1']);
      latenciesMs.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return {
    name: opts.name,
    done: latenciesMs.length,
    seconds: (performance.now() - started) / 1000,
    latenciesMs,
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function report(r: {
  fresh: PhaseResult;
  replays: PhaseResult;
  commitRate: PhaseResult;
  readRate: PhaseResult;
  counters: {
    before: { commits: number; xids: number };
    after: { commits: number; xids: number };
    afterReplays: { commits: number; xids: number };
  };
}): void {
  const rate = (p: PhaseResult) => p.done / p.seconds;
  const row = (p: PhaseResult) => {
    const sorted = [...p.latenciesMs].sort((a, b) => a - b);
    return `${p.name.padEnd(40)} ${rate(p).toFixed(0).padStart(8)} /s   p50 ${percentile(sorted, 50).toFixed(1).padStart(6)} ms   p95 ${percentile(sorted, 95).toFixed(1).padStart(6)} ms   p99 ${percentile(sorted, 99).toFixed(1).padStart(6)} ms   (${p.done})`;
  };
  const { before, after, afterReplays } = r.counters;
  const commitsPerPayment = (after.commits - before.commits) / r.fresh.done;
  const writesPerPayment = (after.xids - before.xids) / r.fresh.done;
  const writesPerReplay = (afterReplays.xids - after.xids) / r.replays.done;
  console.log(
    `\ncreatePayment, concurrency ${CONCURRENCY}, full path: HTTP → GraphQL → tRPC → PostgreSQL → sandbox provider\n`,
  );
  for (const p of [r.fresh, r.replays, r.commitRate, r.readRate]) console.log(row(p));
  console.log(`
new payment: ${commitsPerPayment.toFixed(2)} PostgreSQL commits (xact_commit), ${writesPerPayment.toFixed(2)} writing transactions (xids assigned)
replay:      ${writesPerReplay.toFixed(2)} writing transactions
new keys ÷ PostgreSQL commit rate:        ${(rate(r.fresh) / rate(r.commitRate)).toFixed(3)}  (ceiling at 2 writing transactions each: 0.5)
replays ÷ PostgreSQL indexed-read rate:   ${(rate(r.replays) / rate(r.readRate)).toFixed(3)}
`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
