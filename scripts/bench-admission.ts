/**
 * `npm run bench:admission`: createPayment throughput before and after a schema change, as
 * ratios measured in one run on one machine. "Before" is a commit checked out into a temporary
 * git worktree (sharing this checkout's node_modules); "after" is this working tree, committed
 * or not. Each tree runs its own `scripts/bench-create-payment.ts` (its own gateway, its own
 * scratch database) in alternation — before, after, before, after — so that drift of the
 * machine over the run (caches, other load) falls on both sides alike.
 *
 *   npm run bench:admission -- [--rounds 2] [--concurrency 16] [--requests 2000]
 *
 * BENCH_BEFORE_REF picks the "before" commit; by default it is the parent of the commit that
 * added migrations/0007-retention-partitions.sql, or HEAD while that file is uncommitted.
 * BENCH_DATABASE_URL is passed through to the benches.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import { git, REPO, withWorktree, workingTreeFingerprint } from './bench/worktree.ts';
import { table } from '../ops/render.ts';

const PARTITION_MIGRATION = 'migrations/0007-retention-partitions.sql';
const BENCH_SCRIPT = 'scripts/bench-create-payment.ts';
/** One bench run (start-up, 4 load phases of at most 60 s each, teardown) never needs this long. */
const RUN_LIMIT_MS = 10 * 60_000;
/** Lines of a failed run's stderr shown with the error; the cause is nearly always at the end. */
const STDERR_TAIL_LINES = 60;

type Side = 'before' | 'after';

interface Options {
  rounds: number;
  concurrency: number;
  requests: number;
}

interface Rate {
  perSecond: number;
  p50Ms: number | undefined;
  p95Ms: number | undefined;
  done: number | undefined;
}

interface BenchRun {
  side: Side;
  round: number;
  /** What was measured: a commit, or the working tree's state (it may change between runs). */
  source: string;
  fresh: Rate;
  replays: Rate;
  commitsPerPayment: number | undefined;
}

interface BeforeRef {
  hash: string;
  why: string;
}

async function main(): Promise<void> {
  const options = parseOptions();
  const head = await git(['rev-parse', 'HEAD']);
  const before = await resolveBeforeRef(head);
  progress(`HEAD at start: ${head}`);
  progress(`before = ${before.hash} (${before.why}); after = working tree of ${REPO}`);
  const runs = await withWorktree(
    before.hash,
    (worktree) => alternate({ options, worktree, beforeHash: before.hash }),
    (message) => {
      progress(message);
      process.exitCode = 1;
    },
  );
  report({ runs, options, head, before });
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '2' },
      concurrency: { type: 'string', default: '16' },
      requests: { type: 'string', default: '2000' },
    },
  });
  const options = {
    rounds: Number(values.rounds),
    concurrency: Number(values.concurrency),
    requests: Number(values.requests),
  };
  for (const [name, value] of Object.entries(options)) {
    if (!Number.isInteger(value) || value < 1 || value > 100_000) {
      throw new Error(`--${name} must be an integer in [1, 100000]`);
    }
  }
  return options;
}

function progress(message: string): void {
  console.error(`[bench:admission] ${message}`);
}

/**
 * The default compares against the schema without partitions: the commit before 0007 was
 * added. While 0007 is only in the working tree, that is HEAD.
 */
async function resolveBeforeRef(head: string): Promise<BeforeRef> {
  const configured = process.env['BENCH_BEFORE_REF'];
  if (configured) {
    return {
      hash: await git(['rev-parse', '--verify', `${configured}^{commit}`]),
      why: 'BENCH_BEFORE_REF',
    };
  }
  const added = await git(['log', '--diff-filter=A', '--format=%H', '--', PARTITION_MIGRATION]);
  // Oldest last: if the file was ever deleted and re-added, the first addition is the change.
  const first = added.split('\n').filter(Boolean).at(-1);
  if (first === undefined) {
    return { hash: head, why: `HEAD: ${PARTITION_MIGRATION} is not committed yet` };
  }
  return {
    hash: await git(['rev-parse', '--verify', `${first}^`]),
    why: `parent of ${first.slice(0, 12)}, which added ${PARTITION_MIGRATION}`,
  };
}

async function alternate(opts: {
  options: Options;
  worktree: string;
  beforeHash: string;
}): Promise<BenchRun[]> {
  const runs: BenchRun[] = [];
  for (let round = 1; round <= opts.options.rounds; round += 1) {
    for (const side of ['before', 'after'] as const) {
      const cwd = side === 'before' ? opts.worktree : REPO;
      const source =
        side === 'before' ? opts.beforeHash.slice(0, 12) : `tree ${await workingTreeFingerprint()}`;
      progress(`round ${round}: ${side} (${source})`);
      const output = await runBench({ cwd, options: opts.options });
      runs.push({ side, round, source, ...parseBenchOutput(output) });
    }
  }
  return runs;
}

/**
 * One run of a tree's bench. It starts a gateway and a sandbox provider of its own, so it runs
 * in its own process group: on timeout or Ctrl-C the whole group is stopped, not just the bench
 * (whose children would otherwise outlive it). A bench killed that way leaves its scratch
 * database (pgw_bench_*) behind.
 */
async function runBench(opts: { cwd: string; options: Options }): Promise<string> {
  const { concurrency, requests } = opts.options;
  const child = spawn(
    process.execPath,
    [
      ...['--import', 'tsx', BENCH_SCRIPT],
      ...['--concurrency', String(concurrency), '--requests', String(requests)],
    ],
    { cwd: opts.cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = tail(stderr + chunk.toString(), STDERR_TAIL_LINES);
  });
  const stop = (): void => stopGroup(child);
  const timer = setTimeout(stop, RUN_LIMIT_MS);
  process.once('SIGINT', stop);
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    if (code !== 0) {
      throw new Error(`${BENCH_SCRIPT} in ${opts.cwd} exited ${code}\n${stdout}\n${stderr}`);
    }
    return stdout;
  } finally {
    clearTimeout(timer);
    process.off('SIGINT', stop);
  }
}

function tail(text: string, lines: number): string {
  return text.split('\n').slice(-lines).join('\n');
}

function stopGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null) return;
  progress(`stopping bench process group ${child.pid}`);
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    // Already gone.
  }
}

/**
 * Reads the bench's text report, the only output the "before" tree's bench has. A row looks
 * like `new keys   1234 /s   p50   11.2 ms   p95   20.1 ms   p99 …   (2000)`; only the rate is
 * required, so a later change to the other columns does not break the comparison.
 */
function parseBenchOutput(output: string): Omit<BenchRun, 'side' | 'round' | 'source'> {
  const commits = /new payment:\s+([\d.]+) PostgreSQL commits/.exec(output)?.[1];
  return {
    fresh: parseRate(output, 'new keys'),
    replays: parseRate(output, 'replays'),
    commitsPerPayment: commits === undefined ? undefined : Number(commits),
  };
}

function parseRate(output: string, name: string): Rate {
  const line = output.split('\n').find((l) => l.trimStart().startsWith(`${name} `));
  const rate = line === undefined ? undefined : /([\d.]+)\s*\/s/.exec(line)?.[1];
  if (line === undefined || rate === undefined) {
    throw new Error(`no "${name} … /s" row in the bench output:\n${output}`);
  }
  const number = (re: RegExp) => {
    const match = re.exec(line)?.[1];
    return match === undefined ? undefined : Number(match);
  };
  return {
    perSecond: Number(rate),
    p50Ms: number(/p50\s+([\d.]+)/),
    p95Ms: number(/p95\s+([\d.]+)/),
    done: number(/\((\d+)\)\s*$/),
  };
}

function mean(values: number[]): number {
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}

function fmt(value: number | undefined, digits = 0): string {
  return value === undefined ? '-' : value.toFixed(digits);
}

function report(r: { runs: BenchRun[]; options: Options; head: string; before: BeforeRef }): void {
  const runsTable = table([
    'round',
    'tree',
    'source',
    'new keys /s',
    'p50 ms',
    'p95 ms',
    'replays /s',
    'p50 ms',
    'p95 ms',
    'commits / payment',
  ]);
  for (const run of r.runs) {
    runsTable.push([
      run.round,
      run.side,
      run.source,
      fmt(run.fresh.perSecond),
      fmt(run.fresh.p50Ms, 1),
      fmt(run.fresh.p95Ms, 1),
      fmt(run.replays.perSecond),
      fmt(run.replays.p50Ms, 1),
      fmt(run.replays.p95Ms, 1),
      fmt(run.commitsPerPayment, 2),
    ]);
  }
  const side = (s: Side) => r.runs.filter((run) => run.side === s);
  const summary = table(['createPayment', 'before /s (mean)', 'after /s (mean)', 'after/before']);
  for (const [name, pick] of [
    ['new keys', (run: BenchRun) => run.fresh.perSecond],
    ['replays', (run: BenchRun) => run.replays.perSecond],
  ] as const) {
    const before = mean(side('before').map(pick));
    const after = mean(side('after').map(pick));
    summary.push([name, before.toFixed(0), after.toFixed(0), (after / before).toFixed(3)]);
  }
  console.log(`
createPayment admission, before vs after, concurrency ${r.options.concurrency}, ${r.options.requests} requests per phase
before: ${r.before.hash} (${r.before.why})
after:  working tree of ${REPO} (HEAD ${r.head})
order:  ${r.runs.map((run) => (run.side === 'before' ? 'A' : 'B')).join('')} (A = before, B = after)

${runsTable.toString()}

${summary.toString()}
after/before > 1: the working tree admits more requests per second than the before commit.`);
  warnAboutRuns(r);
}

/** Conditions under which the ratios above compare less than they appear to. */
function warnAboutRuns(r: { runs: BenchRun[]; options: Options }): void {
  const sources = new Set(r.runs.filter((run) => run.side === 'after').map((run) => run.source));
  if (sources.size > 1) {
    console.log(
      'warning: the working tree changed between "after" runs; they measured different code.',
    );
  }
  for (const run of r.runs) {
    for (const [name, rate] of [
      ['new keys', run.fresh],
      ['replays', run.replays],
    ] as const) {
      if (rate.done !== undefined && rate.done < r.options.requests) {
        console.log(
          `warning: round ${run.round} ${run.side} ${name} did ${rate.done} of ${r.options.requests} requests (the bench's 60 s phase limit).`,
        );
      }
    }
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
