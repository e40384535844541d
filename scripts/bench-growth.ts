/**
 * `npm run bench:growth`: does the request path slow down as the database fills up? Two gateways
 * of this working tree, one on an empty database and one on a database preloaded with
 * `--payments` payments' worth of rows (growth-preload.ts: payments, their keys and answers,
 * events, deliveries, ledger, receipts, inbox), take turns serving blocks of new payments and of
 * replays at each concurrency, as bench:ab's two sides do. The report gives grown ÷ empty per
 * block and their median, each side's CPU per request and the blocks its database read from
 * outside shared buffers per request, the tables' and indexes' sizes per million payments, how
 * long the load took, and how long a retention pass took over a third of the loaded events.
 *
 * Both gateways run with their defaults, the outbox included; the preloaded events are outside
 * every consumer's log, so they add rows, not work. Nothing is asserted on time. `--help` lists
 * the options.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type pg from 'pg';
import { buildJavaScript } from './build.ts';
import { integerFlag } from './bench/args.ts';
import { Children } from './bench/children.ts';
import { preload } from './bench/growth-preload.ts';
import { runLoad } from './bench/load.ts';
import { BLOCK_LIMIT_MS, measuredBlock, type BlockFigures } from './bench/measured-block.ts';
import {
  benchPool,
  createScratchDatabase,
  type ScratchDatabase,
} from './bench/scratch-database.ts';
import { fixed, percentile } from './bench/stats.ts';
import { startGateway, startPsp } from './bench/systems.ts';
import { graphqlTarget, type Target } from './bench/targets.ts';
import { REPO } from './bench/worktree.ts';
import { addWaits, startWaitSampler, type WaitSamples } from './bench/wait-sampler.ts';
import { LOG_BACKLOG } from '../lib/outbox/event-log.sql.ts';
import { pruneOutbox, DEFAULT_OUTBOX_RETENTION } from '../lib/outbox/outbox-retention.ts';
import { table } from '../ops/render.ts';

const USAGE = `npm run bench:growth -- [options]
  --payments N       payments preloaded into the grown database (default 5000000)
  --concurrency L    comma-separated concurrencies (default 16,64)
  --blocks N         blocks per side, phase and concurrency, an even number (default 6)
  --requests N       requests per block (default 1500)
  --warm-up N        requests per side before measuring (default 3000)
  --sample-waits     sample each side's active backends in pg_stat_activity during every block
                     and report their wait events per request (wait-sampler.ts): contention
                     shows as LWLock and Lock samples, slower statements as CPU samples
  --help             this text`;

/** Tenants besides the bench's own that the preloaded rows are spread over. */
const OTHER_TENANTS = 3;
/** The retention pass measured deletes what is older than this (the oldest third of 30 days). */
const PASS_WINDOW_SECONDS = 20 * 86_400;
/** How long the measured retention pass may run. */
const PASS_BUDGET_MS = 600_000;
const DAY_MS = 86_400_000;

type Phase = 'new' | 'replay';

interface Side {
  name: 'empty' | 'grown';
  db: ScratchDatabase;
  pool: pg.Pool;
  target: Target;
  pid: number;
  warmKeys: string[];
}

function parseOptions() {
  const { values } = parseArgs({
    options: {
      help: { type: 'boolean', default: false },
      payments: { type: 'string', default: '5000000' },
      concurrency: { type: 'string', default: '16,64' },
      blocks: { type: 'string', default: '6' },
      requests: { type: 'string', default: '1500' },
      'warm-up': { type: 'string', default: '3000' },
      'sample-waits': { type: 'boolean', default: false },
    },
  });
  if (values.help) return undefined;
  const blocks = integerFlag('blocks', values.blocks, [2, 40]);
  if (blocks % 2 !== 0) throw new Error('--blocks takes an even number');
  return {
    payments: integerFlag('payments', values.payments, [1_000, 50_000_000]),
    concurrencies: values.concurrency
      .split(',')
      .map((c) => integerFlag('concurrency', c, [1, 256])),
    blocks,
    requests: integerFlag('requests', values.requests, [100, 100_000]),
    warmUp: integerFlag('warm-up', values['warm-up'], [100, 100_000]),
    sampleWaits: values['sample-waits'],
  };
}

function progress(message: string): void {
  console.error(`[bench:growth] ${message}`);
}

/** Loads the grown database; returns how long it took, in seconds. */
async function grow(pool: pg.Pool, payments: number): Promise<number> {
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO tenants (id, name)
     SELECT gen_random_uuid(), 'growth-' || n FROM generate_series(1, $1) AS n RETURNING id`,
    [OTHER_TENANTS],
  );
  const bench = await pool.query<{ id: string }>(`SELECT id FROM tenants WHERE name = 'bench'`);
  const tenantIds = [...bench.rows, ...rows].map((r) => r.id);
  const started = performance.now();
  await preload(pool, {
    tenantIds,
    payments,
    progress: (loaded) => progress(`loaded ${loaded} of ${payments} payments`),
  });
  return (performance.now() - started) / 1000;
}

/** Heap and index bytes per million payments, per table, largest first. */
async function sizes(pool: pg.Pool, payments: number): Promise<string> {
  const { rows } = await pool.query<{ name: string; heap: string; indexes: string }>(
    `SELECT coalesce(p.relname, c.relname) AS name,
            sum(pg_table_size(c.oid))::text AS heap, sum(pg_indexes_size(c.oid))::text AS indexes
       FROM pg_class c
       LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
       LEFT JOIN pg_class p ON p.oid = i.inhparent
      WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace
      GROUP BY 1 ORDER BY sum(pg_total_relation_size(c.oid)) DESC`,
  );
  const perMillion = (bytes: string) => `${fixed(Number(bytes) / 2 ** 20 / (payments / 1e6), 0)}`;
  const out = table(['table', 'heap MiB per million payments', 'indexes MiB per million']);
  for (const r of rows.filter((r) => Number(r.heap) + Number(r.indexes) > 2 ** 20)) {
    out.push([r.name, perMillion(r.heap), perMillion(r.indexes)]);
  }
  return out.toString();
}

/**
 * Each side's sampled backend states, as backend-samples per thousand requests: the same
 * request count on both sides, so a state that grows on the grown side is where it spends more.
 */
function waitTable(title: string, waits: Map<Side['name'], WaitSamples>, requests: number): string {
  const empty = waits.get('empty')?.byWhat ?? new Map<string, number>();
  const grown = waits.get('grown')?.byWhat ?? new Map<string, number>();
  const whats = [...new Set([...empty.keys(), ...grown.keys()])].sort(
    (a, b) => (grown.get(b) ?? 0) - (grown.get(a) ?? 0),
  );
  const out = table([`${title}: backend state`, 'empty, per 1000 requests', 'grown, per 1000']);
  const per1000 = (n: number | undefined) => fixed(((n ?? 0) * 1000) / requests, 1);
  for (const what of whats.slice(0, 12))
    out.push([what, per1000(empty.get(what)), per1000(grown.get(what))]);
  return out.toString();
}

async function warmUp(side: Side, count: number): Promise<void> {
  const warm = await runLoad({
    target: side.target,
    concurrency: 16,
    count,
    limitMs: BLOCK_LIMIT_MS * 2,
    key: (i) => `growth-warm-${side.name}-${i}`,
  });
  if (warm.errors > 0) throw new Error(`${side.name} warm-up: ${warm.errorSamples.join(' | ')}`);
  side.warmKeys = warm.succeededKeys;
}

/** Blocks of `phase` at `c`, the sides taking turns; grown ÷ empty per block. */
async function compare(
  sides: [Side, Side],
  run: {
    phase: Phase;
    c: number;
    blocks: number;
    requests: number;
    pspPid: number;
    /** Where each side's wait samples go, when sampled. */
    waits: Map<Side['name'], WaitSamples> | null;
  },
): Promise<Array<[BlockFigures, BlockFigures]>> {
  const pairs: Array<[BlockFigures, BlockFigures]> = [];
  for (let block = 0; block < run.blocks; block++) {
    const order = block % 2 === 0 ? sides : ([sides[1], sides[0]] as const);
    const got = new Map<string, BlockFigures>();
    for (const side of order) {
      const sampler = run.waits && (await startWaitSampler(side.db.url, side.db.name));
      const figures = await measuredBlock({
        target: side.target,
        db: { pool: side.pool, name: side.db.name },
        pids: { system: side.pid, psp: run.pspPid },
        concurrency: run.c,
        count: run.requests,
        key: (i) =>
          run.phase === 'new'
            ? `growth-${side.name}-c${run.c}-${block}-${i}`
            : side.warmKeys[i % side.warmKeys.length]!,
      });
      if (sampler) {
        const samples = await sampler.stop();
        const into = run.waits!.get(side.name) ?? { samples: 0, byWhat: new Map() };
        addWaits(into, samples);
        run.waits!.set(side.name, into);
      }
      got.set(side.name, figures);
      await caughtUp(side);
    }
    pairs.push([got.get('empty')!, got.get('grown')!]);
    progress(`${run.phase} c=${run.c} block ${block + 1}/${run.blocks}`);
  }
  return pairs;
}

/** The longest a side's outbox is given to catch up after its block. */
const CATCH_UP_LIMIT_MS = 30_000;

/**
 * Waits until the side's log consumers (ledger, receipts) have read every event its block wrote,
 * bounded. Both gateways share one server: without this, what one side's block leaves behind
 * runs during the other side's block and is charged to it.
 */
async function caughtUp(side: Side): Promise<void> {
  const deadline = Date.now() + CATCH_UP_LIMIT_MS;
  for (;;) {
    const { rows } = await side.pool.query<{ pending: number }>(LOG_BACKLOG);
    if (rows.every((r) => r.pending === 0)) return;
    if (Date.now() > deadline) {
      progress(`${side.name}: the outbox did not catch up in ${CATCH_UP_LIMIT_MS} ms; going on`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * PostgreSQL reports a backend's block counts at most once a second while it works, and ten
 * seconds after it goes idle: reading them sooner misses the end of a phase.
 */
const STATS_SETTLE_MS = 11_000;

/** Blocks the side's database read from outside shared buffers so far (the OS cache or disk). */
async function blocksRead(side: Side): Promise<number> {
  const { rows } = await side.pool.query<{ read: string }>(
    'SELECT blks_read::text AS read FROM pg_stat_database WHERE datname = $1',
    [side.db.name],
  );
  return Number(rows[0]?.read ?? 0);
}

function median(values: number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

async function main(): Promise<void> {
  const options = parseOptions();
  if (options === undefined) {
    console.log(USAGE);
    return;
  }
  const dir = join(REPO, `.build-growth-${process.pid}`);
  progress('building');
  buildJavaScript(dir);
  const children = new Children(dir);
  const dbs: ScratchDatabase[] = [];
  const pools: pg.Pool[] = [];
  try {
    const apiKey = `sk_test_bench_growth_${randomBytes(12).toString('hex')}`;
    const psp = await startPsp(children);
    const sides: Side[] = [];
    for (const name of ['empty', 'grown'] as const) {
      const db = await createScratchDatabase();
      dbs.push(db);
      const pool = benchPool(db.url);
      pools.push(pool);
      const gateway = await startGateway(children, {
        databaseUrl: db.url,
        pspUrl: psp.url,
        apiKey,
        outbox: 'running',
      });
      const target = graphqlTarget({ name: 'product', url: gateway.url, apiKey });
      sides.push({ name, db, pool, target, pid: gateway.process.pid ?? 0, warmKeys: [] });
    }
    const [empty, grown] = sides as [Side, Side];
    progress(`preloading ${options.payments} payments`);
    const loadSeconds = await grow(grown.pool, options.payments);
    // As autovacuum leaves a month of traffic: every loaded row's visibility settled (hint bits
    // and the visibility map set), not left for the measured requests' first reads to settle.
    progress('vacuuming the load');
    await grown.pool.query('VACUUM (FREEZE, ANALYZE)');
    // The load's pages written out now, not by a checkpoint in the middle of the measurement
    // (CHECKPOINT needs a superuser or pg_checkpoint; without either, the run says so).
    await grown.pool.query('CHECKPOINT').catch((error: unknown) => {
      progress(
        `no CHECKPOINT after the load: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
    for (const side of sides) {
      progress(`warming up ${side.name}`);
      await warmUp(side, options.warmUp);
      await side.pool.query('ANALYZE');
    }
    const lines: string[] = [];
    const waitLines: string[] = [];
    const rows = table([
      'phase',
      'C',
      'empty /s',
      'grown /s',
      'grown ÷ empty (blocks)',
      'gateway µs',
      'PostgreSQL µs',
      'blocks read',
    ]);
    /** Empty → grown, the medians of the blocks. */
    const both = (pairs: Array<[BlockFigures, BlockFigures]>, pick: (b: BlockFigures) => number) =>
      `${fixed(median(pairs.map(([e]) => pick(e))), 0)} → ${fixed(median(pairs.map(([, g]) => pick(g))), 0)}`;
    for (const c of options.concurrencies) {
      for (const phase of ['new', 'replay'] as const) {
        const before = await Promise.all(sides.map((side) => blocksRead(side)));
        const waits = options.sampleWaits ? new Map<Side['name'], WaitSamples>() : null;
        const pairs = await compare([empty, grown], {
          phase,
          c,
          blocks: options.blocks,
          requests: options.requests,
          pspPid: psp.process.pid ?? 0,
          waits,
        });
        if (waits)
          waitLines.push(waitTable(`${phase} c=${c}`, waits, options.blocks * options.requests));
        await new Promise((resolve) => setTimeout(resolve, STATS_SETTLE_MS));
        const after = await Promise.all(sides.map((side) => blocksRead(side)));
        const requests = options.blocks * options.requests;
        const read = sides.map((_, i) => fixed((after[i]! - before[i]!) / requests, 2));
        const ratios = pairs.map(([e, g]) => g.perSecond / e.perSecond);
        rows.push([
          phase,
          String(c),
          fixed(median(pairs.map(([e]) => e.perSecond)), 0),
          fixed(median(pairs.map(([, g]) => g.perSecond)), 0),
          `${fixed(median(ratios), 3)} (${fixed(Math.min(...ratios), 2)}–${fixed(Math.max(...ratios), 2)})`,
          both(pairs, (b) => b.gatewayUs),
          both(pairs, (b) => b.postgresUs),
          `${read[0]} → ${read[1]}`,
        ]);
      }
    }
    const sizeTable = await sizes(grown.pool, options.payments);
    progress('a retention pass over the oldest third of the preloaded events');
    const passStarted = performance.now();
    const pruned = await pruneOutbox(grown.pool, {
      ...DEFAULT_OUTBOX_RETENTION,
      retentionSeconds: PASS_WINDOW_SECONDS,
      budgetMs: PASS_BUDGET_MS,
    });
    const passSeconds = (performance.now() - passStarted) / 1000;
    lines.push(
      `bench:growth, ${new Date().toISOString()}: ${options.payments} payments preloaded in ${fixed(loadSeconds, 0)} s; ${options.blocks} blocks of ${options.requests} per side`,
      rows.toString(),
      sizeTable,
      ...waitLines,
      `retention pass (events older than ${PASS_WINDOW_SECONDS / (DAY_MS / 1000)} days): ${pruned.events} events, ${pruned.deliveries} deliveries, ${pruned.inboxMessages} inbox rows, ${pruned.circuits} circuits in ${fixed(passSeconds, 1)} s (${pruned.complete ? 'complete' : 'budget spent'})`,
    );
    console.log(lines.join('\n'));
  } finally {
    await children.stopAll();
    for (const pool of pools) await pool.end();
    for (const db of dbs) await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
