/**
 * `npm run bench:ab`: what one change does to the gateway, measured with both versions running
 * at once. "Before" is a commit, built in a git worktree; "after" is this working tree. Both
 * gateways run their built JavaScript on one scratch database and one sandbox provider, each
 * is warmed up, the database is analyzed, and then they take turns serving blocks of requests
 * (before, after, after, before, …), so a drift of the machine over the run falls on both alike.
 * Each block's CPU per request is read from /proc for the gateway and for PostgreSQL's
 * backends (only one side is busy at a time), and the report gives the after ÷ before ratio of
 * each block and their median. Nothing is asserted on time.
 *
 * Why blocks rather than whole bench runs taken in turn: on a shared machine the speed of the
 * same code drifts from minute to minute, and two runs minutes apart cannot tell a small change
 * from that drift. Blocks of a few seconds, side by side, can. `--help` lists the options.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildJavaScript } from './build.ts';
import { integerFlag } from './bench/args.ts';
import { Children, type Child } from './bench/children.ts';
import { runLoad } from './bench/load.ts';
import { BLOCK_LIMIT_MS, measuredBlock, type BlockFigures } from './bench/measured-block.ts';
import {
  analyzeAfterWarmUp,
  benchPool,
  createScratchDatabase,
  type ScratchDatabase,
} from './bench/scratch-database.ts';
import { fixed, percentile } from './bench/stats.ts';
import { startGateway, startPsp } from './bench/systems.ts';
import { graphqlTarget, type Target } from './bench/targets.ts';
import { git, REPO, withWorktree, workingTreeFingerprint } from './bench/worktree.ts';
import { table } from '../ops/render.ts';

/** A smoke run may warm up less; fewer than this leaves replays too few keys to spread over. */
const MIN_WARM_UP = 100;
/** Bounds that keep a mistyped flag from starting an hours-long run. */
const MAX_BLOCKS = 40;
const MAX_REQUESTS = 10_000;
/** Fewer than this, and /proc's 10 ms ticks are a large part of a block's CPU. */
const MIN_REQUESTS = 100;

const PHASES = ['new', 'replay', 'storm'] as const;
const PHASE_NAMES = { new: 'new payments', replay: 'replays', storm: 'duplicate storms' };
/** Copies of each key in a storm, sent at once: one admission wins, the rest are in flight. */
const STORM_COPIES = 20;

const USAGE = `npm run bench:ab -- [options]
  --before REV           the commit to compare with (default HEAD); it must have scripts/build.ts
  --phase new|replay|storm
                         new payments, replays, or storms: each key sent ${STORM_COPIES} times at
                         once (--concurrency a multiple of ${STORM_COPIES}; default new)
  --blocks N             blocks per side, an even number (default 10)
  --requests N           requests per block (default 1500)
  --concurrency N        requests in flight (default 16)
  --warm-up N            requests per side before measuring (default 3000: V8 has optimised by then)
  --env-after KEY=VALUE  a variable for the after side's gateway only, to measure a setting
                         (LOG_LEVEL=silent, NODE_ENV=production) rather than a change; repeatable
  --help                 this text
"After" is the working tree, uncommitted edits included: --before HEAD with a clean tree is an
A/A run, the method's own noise.`;

type Options = NonNullable<ReturnType<typeof parseOptions>>;

interface Side {
  name: 'before' | 'after';
  source: string;
  gateway: Child;
  target: Target;
  warmKeys: string[];
  blocks: BlockFigures[];
}

/** `undefined`: --help was asked for. */
function parseOptions() {
  const { values } = parseArgs({
    options: {
      help: { type: 'boolean', default: false },
      before: { type: 'string', default: 'HEAD' },
      phase: { type: 'string', default: 'new' },
      blocks: { type: 'string', default: '10' },
      requests: { type: 'string', default: '1500' },
      concurrency: { type: 'string', default: '16' },
      'warm-up': { type: 'string', default: '3000' },
      'env-after': { type: 'string', multiple: true, default: [] },
    },
  });
  if (values.help) return undefined;
  const phase = PHASES.find((p) => p === values.phase);
  if (phase === undefined) throw new Error(`--phase is one of ${PHASES.join(', ')}`);
  const concurrency = integerFlag('concurrency', values.concurrency, [1, 256]);
  if (phase === 'storm' && concurrency % STORM_COPIES !== 0) {
    throw new Error(`--phase storm takes a --concurrency that is a multiple of ${STORM_COPIES}`);
  }
  const blocks = integerFlag('blocks', values.blocks, [2, MAX_BLOCKS]);
  // Each side goes first in half the blocks only if their number is even.
  if (blocks % 2 !== 0) throw new Error('--blocks takes an even number');
  const envAfter: Record<string, string> = {};
  for (const pair of values['env-after']) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(pair);
    if (match === null) throw new Error(`--env-after takes KEY=VALUE, not ${pair}`);
    envAfter[match[1]!] = match[2]!;
  }
  return {
    before: values.before,
    phase,
    blocks,
    requests: integerFlag('requests', values.requests, [MIN_REQUESTS, MAX_REQUESTS]),
    concurrency,
    warmUp: integerFlag('warm-up', values['warm-up'], [MIN_WARM_UP, MAX_REQUESTS]),
    envAfter,
  };
}

function progress(message: string): void {
  console.error(`[bench:ab] ${message}`);
}

/** The before commit's own build, into its worktree's dist/. */
function buildWorktree(dir: string): string {
  if (!existsSync(join(dir, 'scripts/build.ts'))) {
    throw new Error('the before commit has no scripts/build.ts: pick 7c4913b or later');
  }
  const built = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (built.status !== 0) throw new Error(`before build failed:\n${built.stdout}${built.stderr}`);
  return join(dir, 'dist');
}

async function measureBlocks(run: {
  sides: [Side, Side];
  options: Options;
  db: ScratchDatabase;
  pspPid: number;
}): Promise<string> {
  const { options } = run;
  const pool = benchPool(run.db.url);
  try {
    const autovacuum = await analyzeAfterWarmUp(pool);
    for (let block = 0; block < options.blocks; block++) {
      const order = block % 2 === 0 ? run.sides : ([run.sides[1], run.sides[0]] as const);
      for (const side of order) {
        const figures = await measuredBlock({
          target: side.target,
          db: { pool, name: run.db.name },
          pids: { system: side.gateway.process.pid ?? 0, psp: run.pspPid },
          concurrency: options.concurrency,
          count: options.requests,
          key: (i) => keyOf(options.phase, { side, block, i }),
        });
        side.blocks.push(figures);
        progress(
          `block ${block + 1}/${options.blocks} ${side.name}: ${fixed(figures.perSecond, 0)}/s`,
        );
      }
    }
    return autovacuum;
  } finally {
    await pool.end();
  }
}

/**
 * The key of a block's request `i`. A storm's workers take consecutive indices, so the
 * copies of one key are in flight together.
 */
function keyOf(
  phase: (typeof PHASES)[number],
  at: { side: Side; block: number; i: number },
): string {
  const { side, block, i } = at;
  if (phase === 'new') return `ab-${side.name}-${block}-${i}`;
  if (phase === 'storm') return `ab-${side.name}-${block}-storm-${Math.floor(i / STORM_COPIES)}`;
  return side.warmKeys[i % side.warmKeys.length]!;
}

/** The middle block's ratio (the upper one of the two middle blocks). */
function median(values: number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

function report(run: { sides: [Side, Side]; options: Options; autovacuum: string }): void {
  const { options } = run;
  const [before, after] = run.sides;
  console.log(
    `bench:ab, ${new Date().toISOString()}: ${PHASE_NAMES[options.phase]} at concurrency ${options.concurrency}, ${options.blocks} blocks of ${options.requests} per side`,
  );
  const env = Object.entries(options.envAfter).map(([k, v]) => `${k}=${v}`);
  console.log(
    `before = ${before.source}; after = ${after.source}${env.length > 0 ? ` with ${env.join(' ')}` : ''}; autovacuum ${run.autovacuum}, so the database was analyzed after the warm-ups`,
  );
  const rows = table(['block', 'throughput /s', 'gateway µs/request', 'PostgreSQL µs/request']);
  const ratio = (pick: (b: Side['blocks'][number]) => number) =>
    after.blocks.map((b, i) => pick(b) / pick(before.blocks[i]!));
  const ratios = {
    perSecond: ratio((b) => b.perSecond),
    gatewayUs: ratio((b) => b.gatewayUs),
    postgresUs: ratio((b) => b.postgresUs),
  };
  before.blocks.forEach((b, i) => {
    const a = after.blocks[i]!;
    const cell = (x: number, y: number, r: number) =>
      `${fixed(x, 0)} → ${fixed(y, 0)} (${fixed(r, 2)})`;
    rows.push([
      String(i + 1),
      cell(b.perSecond, a.perSecond, ratios.perSecond[i]!),
      cell(b.gatewayUs, a.gatewayUs, ratios.gatewayUs[i]!),
      cell(b.postgresUs, a.postgresUs, ratios.postgresUs[i]!),
    ]);
  });
  console.log(rows.toString());
  const summary = (label: string, values: number[]) =>
    `  ${label.padEnd(34)} ${fixed(median(values), 3)} (blocks ${fixed(Math.min(...values), 2)}–${fixed(Math.max(...values), 2)})`;
  console.log('after ÷ before, median of the blocks:');
  console.log(summary('throughput', ratios.perSecond));
  console.log(summary('gateway CPU per request', ratios.gatewayUs));
  console.log(summary('PostgreSQL CPU per request', ratios.postgresUs));
}

async function main(): Promise<void> {
  const options = parseOptions();
  if (options === undefined) {
    console.log(USAGE);
    return;
  }
  // Ctrl-C, at any step: the processes started so far are stopped (a load in progress then
  // fails), a step that finishes checks in, and every finally block below still drops the
  // database and removes the builds and the worktree. A second Ctrl-C does not cut that short.
  let interrupted = false;
  const onInterrupt: Array<() => Promise<unknown>> = [];
  process.on('SIGINT', () => {
    if (interrupted) {
      progress('still cleaning up: the database, the builds and the worktree go first');
      return;
    }
    interrupted = true;
    progress('interrupted; stopping its processes and cleaning up');
    for (const stop of onInterrupt) void stop();
  });
  const stillWanted = () => {
    if (interrupted) throw new Error('bench:ab interrupted');
  };
  const beforeHash = await git(['rev-parse', '--verify', `${options.before}^{commit}`]);
  const afterDir = join(REPO, `.build-ab-${process.pid}`);
  const afterSource = `working tree ${await workingTreeFingerprint()} on ${(await git(['rev-parse', 'HEAD'])).slice(0, 12)}`;
  try {
    progress(`building after (${afterSource})`);
    buildJavaScript(afterDir);
    stillWanted();
    await withWorktree(
      beforeHash,
      async (worktree) => {
        progress(`building before (${beforeHash.slice(0, 12)})`);
        const beforeDir = buildWorktree(worktree);
        stillWanted();
        const db = await createScratchDatabase();
        const apiKey = `sk_test_bench_ab_${randomBytes(12).toString('hex')}`;
        const pspChildren = new Children(afterDir);
        const gateways = { before: new Children(beforeDir), after: new Children(afterDir) };
        const stopAll = () =>
          Promise.all([gateways.before.stopAll(), gateways.after.stopAll(), pspChildren.stopAll()]);
        onInterrupt.push(stopAll);
        try {
          stillWanted();
          const psp = await startPsp(pspChildren);
          const sides: Side[] = [];
          for (const name of ['before', 'after'] as const) {
            const gateway = await startGateway(gateways[name], {
              databaseUrl: db.url,
              pspUrl: psp.url,
              apiKey,
              // Deliveries would run into the other side's blocks: the request path alone.
              outbox: 'held back',
              env: name === 'after' ? options.envAfter : {},
            });
            const target = graphqlTarget({ name: 'product', url: gateway.url, apiKey });
            progress(`warming up ${name}`);
            const warm = await runLoad({
              target,
              concurrency: 16,
              count: options.warmUp,
              limitMs: BLOCK_LIMIT_MS * 2,
              key: (i) => `ab-warm-${name}-${i}`,
            });
            if (warm.errors > 0)
              throw new Error(`${name} warm-up: ${warm.errorSamples.join(' | ')}`);
            stillWanted();
            const source = name === 'before' ? beforeHash.slice(0, 12) : afterSource;
            sides.push({ name, source, gateway, target, warmKeys: warm.succeededKeys, blocks: [] });
          }
          const pair = sides as [Side, Side];
          const autovacuum = await measureBlocks({
            sides: pair,
            options,
            db,
            pspPid: psp.process.pid ?? 0,
          });
          stillWanted();
          report({ sides: pair, options, autovacuum });
        } finally {
          await stopAll();
          await db.drop();
        }
      },
      (message) => {
        progress(message);
        process.exitCode = 1;
      },
    );
  } finally {
    rmSync(afterDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
