/**
 * `npm run bench`: createPayment through the whole product path (HTTP → GraphQL → tRPC →
 * PostgreSQL → sandbox provider) against two baselines measured in the same run, on the same
 * scratch database and the same sandbox PSP process:
 *
 *   - bare:      plain node:http + pg doing the payment work with no idempotency
 *                (scripts/bench/bare-server.ts);
 *   - reference: the product's design, hand-written in plain node:http + pg
 *                (scripts/bench/reference-server.ts);
 *   - apollo-reference: the same reference logic and SQL behind Apollo Server 5, with the
 *                product's schema and wire format (scripts/bench/apollo-reference-server.ts):
 *                product ÷ apollo-reference is the product's own machinery, GraphQL aside;
 *   - PostgreSQL's own single-row commit and indexed-read rates, from pgbench.
 *
 * For each concurrency: new keys, replays, and duplicate storms (keys sent many times at once,
 * charges counted at the PSP). Ratios only; no absolute time is asserted. Every phase is
 * bounded in count and time; every process started is stopped; the database is dropped. All
 * three systems and the PSP run as `npm start` runs the gateway: built by scripts/build.ts (into
 * dist/, first thing), with plain node.
 *
 * The load comes from undici's Pool (load.ts); `npm run bench -- --help` lists the options.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import type pg from 'pg';
import { parseBenchArgs, USAGE, type BenchOptions } from './bench/args.ts';
import { Children, type Child } from './bench/children.ts';
import { startBaseline, startGateway, startPsp } from './bench/systems.ts';
import { buildJavaScript, DEFAULT_OUT_DIR } from './build.ts';
import { runPhases } from './bench/measured-phases.ts';
import { checkPgbench, pgbenchRate } from './bench/pgbench.ts';
import { failures, printReport, type BenchReport } from './bench/report.ts';
import { runLoad } from './bench/load.ts';
import {
  analyzeAfterWarmUp,
  benchPool,
  createScratchDatabase,
  type ScratchDatabase,
} from './bench/scratch-database.ts';
import { baselineTarget, graphqlTarget, type SystemName, type Target } from './bench/targets.ts';
import { waitForDrain } from './bench/outbox-backlog.ts';
import { startProfiling, type Profiling } from './bench/profiling.ts';

const API_KEY = `sk_test_bench_${randomBytes(12).toString('hex')}`;
const BASELINE_TENANT = randomUUID();

interface Systems {
  psp: Child;
  children: Record<SystemName, Child>;
  targets: Target[];
}

async function startSystems(
  run: { children: Children; db: ScratchDatabase },
  profiling: Profiling | null,
): Promise<Systems> {
  const psp = await startPsp(run.children);
  const common = (system: SystemName) => ({
    databaseUrl: run.db.url,
    pspUrl: psp.url,
    tenantId: BASELINE_TENANT,
    nodeArgs: profiling?.nodeArgs(system),
  });
  const [product, apolloReference, reference, bare] = await Promise.all([
    startGateway(run.children, { ...common('product'), apiKey: API_KEY, outbox: 'running' }),
    startBaseline(run.children, { ...common('apollo-reference'), name: 'apollo-reference' }),
    startBaseline(run.children, { ...common('reference'), name: 'reference' }),
    startBaseline(run.children, { ...common('bare'), name: 'bare' }),
  ]);
  return {
    psp,
    children: { product, 'apollo-reference': apolloReference, reference, bare },
    targets: [
      graphqlTarget({ name: 'product', url: product.url, apiKey: API_KEY }),
      graphqlTarget({ name: 'apollo-reference', url: apolloReference.url }),
      baselineTarget({ name: 'reference', url: reference.url, tenantId: BASELINE_TENANT }),
      baselineTarget({ name: 'bare', url: bare.url, tenantId: BASELINE_TENANT }),
    ],
  };
}

/** Each system's warm-up keys, prefix and index: what replays and pgbench's reads read. */
const warmPrefix = (system: SystemName) => `${system}-warm-`;

/** Warm-up: JIT, pools, the tenant cache. Its keys are what the replay phases replay. */
async function warmUp(
  targets: Target[],
  options: BenchOptions,
): Promise<Map<SystemName, string[]>> {
  const keys = new Map<SystemName, string[]>();
  for (const target of targets) {
    const load = await runLoad({
      target,
      concurrency: 16,
      count: options.warmUp,
      limitMs: options.phaseLimitMs,
      key: (i) => `${warmPrefix(target.name)}${i}`,
    });
    if (load.errors > 0)
      throw new Error(`${target.name} warm-up: ${load.errorSamples.join(' | ')}`);
    keys.set(target.name, load.succeededKeys);
  }
  return keys;
}

async function postgresRates(
  run: { db: ScratchDatabase; options: BenchOptions },
  referenceKeys: number,
): Promise<BenchReport['postgres']> {
  const rates: BenchReport['postgres'] = [];
  const readKeys = { tenantId: BASELINE_TENANT, prefix: warmPrefix('reference'), n: referenceKeys };
  for (const c of run.options.concurrencies) {
    const spec = { url: run.db.url, concurrency: c, seconds: run.options.pgbenchSeconds, readKeys };
    const commit = await pgbenchRate({ ...spec, kind: 'commit' });
    const read = await pgbenchRate({ ...spec, kind: 'read' });
    rates.push({ concurrency: c, commit, read });
    progress(`pgbench c${c}: ${commit.connections} connections`);
  }
  return rates;
}

function progress(message: string): void {
  console.error(`[bench] ${message}`);
}

async function serverVersion(db: pg.Pool): Promise<string> {
  const { rows } = await db.query<{ server_version: string }>('SHOW server_version');
  return rows[0]?.server_version ?? '?';
}

const loadAverage = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

async function main(): Promise<void> {
  const options = parseBenchArgs(process.argv.slice(2));
  if (options === undefined) {
    console.log(USAGE);
    return;
  }
  const loadBefore = loadAverage();
  // Before the database: a failed build, or no pgbench, fails with nothing to undo.
  checkPgbench();
  buildJavaScript(DEFAULT_OUT_DIR);
  const profiling = options.profile ? await startProfiling() : null;
  const db = await createScratchDatabase();
  const children = new Children(DEFAULT_OUT_DIR);
  const pool = benchPool(db.url);
  // One clean-up, whoever asks first: the end of the run, or Ctrl-C (any number of times).
  let cleaning: Promise<void> | undefined;
  const cleanUp = () =>
    (cleaning ??= (async () => {
      await pool.end().catch(() => undefined);
      await children.stopAll();
      await db.drop();
    })());
  let interrupted = false;
  process.on('SIGINT', () => {
    if (interrupted) return;
    interrupted = true;
    console.error('bench: interrupted; stopping its processes and dropping its database');
    cleanUp().then(
      () => process.exit(130),
      (error: unknown) => {
        console.error('bench: clean-up failed', error);
        process.exit(130);
      },
    );
  });
  let report: BenchReport | undefined;
  let profile = '';
  try {
    const systems = await startSystems({ children, db }, profiling);
    const replayKeys = await warmUp(systems.targets, options);
    // The warm-up's deliveries are not any phase's work.
    if ((await waitForDrain(pool)) === null) throw new Error("the warm-up's outbox did not drain");
    const autovacuum = await analyzeAfterWarmUp(pool);
    const measured = await runPhases({
      db: pool,
      dbName: db.name,
      options,
      targets: systems.targets,
      psp: { url: systems.psp.url, pid: systems.psp.process.pid ?? 0 },
      pidOf: (system) => systems.children[system].process.pid ?? 0,
      replayKeys,
      progress,
    });
    // PostgreSQL's own rates with every system stopped: their pools' idle connections would
    // otherwise leave pgbench few of max_connections, and their processes would share its cores.
    await children.stopAll();
    const postgres = await postgresRates({ db, options }, options.warmUp);
    report = {
      options,
      environment: [
        `createPayment benchmark, ${new Date().toISOString()}: concurrency ${options.concurrencies.join(', ')}; ${options.requests} requests per phase (at most ${options.phaseLimitMs / 1000} s); storms of ${options.stormKeys} keys × ${options.stormCopies} copies`,
        `machine: ${cpus().length} CPUs, load average ${loadBefore} before, ${loadAverage()} after; node ${process.version}; PostgreSQL ${await serverVersion(pool)} (autovacuum ${autovacuum}, so the bench ANALYZEs after the warm-up); gateway LOG_LEVEL=${process.env['LOG_LEVEL'] ?? 'info'}${options.profile ? '; PROFILING (figures include its overhead)' : ''}`,
        `systems: product = gateway (GraphQL → tRPC → engine → PostgreSQL → PSP); apollo-reference = the reference behind Apollo; reference = hand-written design (node:http + pg); bare = no idempotency`,
      ],
      ...measured,
      postgres,
    };
    if (profiling) {
      profile = await profiling.summarise(report.phases);
    }
  } finally {
    await cleanUp();
  }
  if (interrupted) return;
  if (report === undefined) throw new Error('no report');
  printReport(report);
  if (profile !== '') console.log(profile);
  const problems = failures(report);
  if (problems.length > 0) {
    console.error(`bench: correctness failures:\n  ${problems.join('\n  ')}`);
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
