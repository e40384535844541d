/**
 * `--perf`: CPU per layer from Linux `perf`, which samples a thread only while it is on a CPU.
 *
 * Why it exists beside `--profile`: V8's profiler samples the main thread on a wall clock. On two
 * busy cores a thread preempted inside a system call (a socket write that wakes PostgreSQL) keeps
 * being sampled there, so `--profile` charges that wait to the write and overstates the pg
 * driver's socket writes. perf counts CPU only, and finds what a wall-clock profile spreads thin
 * (two Errors built on every transaction, see
 * docs/decisions/0006-pipelined-statements-on-pg-internals.md).
 *
 * Each process runs with `--perf-prof` (V8 writes jit-<pid>.dump: its code, stamped with when it
 * was loaded; see jitdump.ts) and `--interpreted-frames-native-stack` (interpreted functions get
 * frames of their own). The dumps are moved into the run's directory at the end. One
 * `perf record -g` follows the three systems' processes on CLOCK_MONOTONIC, the clock of the
 * phases' windows. Every thread counts: the main thread, V8's GC and compiler helpers, libuv's
 * pool. A sample is charged to a layer as in `--profile` (cpu-profile-layers.ts), from its
 * innermost JavaScript frame outwards; a sample inside the garbage collector is charged to GC.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFile, mkdtemp, readdir, rename, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Child } from './children.ts';
import { layerOfStack } from './cpu-profile-layers.ts';
import { JitCode } from './jitdump.ts';
import type { PhaseResult } from './measured-phase.ts';
import type { Profiling } from './profiling.ts';
import type { SystemName } from './targets.ts';
import { fixed } from './stats.ts';

/**
 * One sample per millisecond a thread spends on a CPU (the task-clock event, a fixed period):
 * each sample stands for exactly that much CPU, whatever the kernel does to sampling rates.
 */
const SAMPLE_US = 1_000;
const SYSTEMS: SystemName[] = ['product', 'reference', 'bare'];
/** The checkout the bench runs from (`npm run bench` runs at the project's root). */
const PROJECT = `${process.cwd()}/`;
/** How many of the product's own functions each phase lists. */
const HOT_FUNCTIONS = 15;
const GC_FRAME = /Scavenge|MarkCompact|Heap::CollectGarbage|ConcurrentMarking|Sweeper|MinorMC/;
/** `JS:*name file:///…/x.ts:1:2253` → the URL. */
const JS_FRAME = /^(?:JS|Function|LazyCompile):\S*\s.*?(\S+):\d+:\d+$/;

interface Sample {
  pid: number;
  tid: number;
  timeUs: number;
  frames: string[];
}

/** Where one sample's CPU went. */
function layerOfSample(sample: Sample): string {
  if (sample.frames.some((frame) => GC_FRAME.test(frame))) return 'GC';
  if (sample.tid !== sample.pid) return 'other threads (compiler, libuv pool)';
  const urls = sample.frames.flatMap((frame) => JS_FRAME.exec(frame)?.[1] ?? []);
  if (urls.length > 0) return layerOfStack(urls);
  return sample.frames.some((frame) => /^uv_|^uv__/.test(frame))
    ? 'event loop (libuv, no JavaScript frame)'
    : 'V8 and Node native code';
}

/**
 * The product's own function a sample ran in: its innermost JavaScript frame, when that is in
 * services/ or src/ (the builtins and native code it called included, other JavaScript not),
 * else "(elsewhere)".
 */
function ownFunction(sample: Sample): string {
  for (const frame of sample.frames) {
    const js = /^(?:JS|Function|LazyCompile):[*~^]?(\S*)\s.*?(\S+):\d+:\d+$/.exec(frame);
    if (js === null) continue;
    const path = js[2]?.replace(/^file:\/\//, '') ?? '';
    // The systems run their built JavaScript (dist/…/x.js): named by the source file.
    const file = path.startsWith(PROJECT)
      ? path
          .slice(PROJECT.length)
          .replace(/^dist\//, '')
          .replace(/\.js$/, '.ts')
      : '';
    const own = file.startsWith('services/') || file.startsWith('src/');
    return own ? `${js[1] || '(anonymous)'} ${file}` : '(elsewhere)';
  }
  return '(elsewhere)';
}

/** Reads `perf script` output sample by sample. */
async function eachSample(
  dataFile: string,
  jitCode: Map<number, JitCode>,
  onSample: (sample: Sample) => void,
): Promise<void> {
  const script = spawn('perf', ['script', '-i', dataFile, '-F', 'pid,tid,time,ip,sym'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const exited = new Promise<void>((resolve) => script.once('exit', () => resolve()));
  let current: Sample | null = null;
  for await (const line of createInterface({ input: script.stdout })) {
    const header = /^\s*(\d+)\/(\d+)\s+(\d+)\.(\d+):/.exec(line);
    if (header !== null) {
      if (current !== null) onSample(current);
      const [, pid, tid, seconds, fraction] = header;
      current = {
        pid: Number(pid),
        tid: Number(tid),
        timeUs: Number(seconds) * 1e6 + Number((fraction ?? '0').padEnd(6, '0').slice(0, 6)),
        frames: [],
      };
    } else if (current !== null && line.trim() !== '') {
      const [, address = '0', symbol = ''] = /^\s*([0-9a-f]+)\s+(.*)$/.exec(line) ?? [];
      const jitted =
        symbol.startsWith('[unknown]') &&
        jitCode.get(current.pid)?.nameAt(BigInt(`0x${address}`), current.timeUs);
      current.frames.push(jitted || symbol);
    }
  }
  if (current !== null) onSample(current);
  await exited;
}

/** A rename, or a copy where the run's directory is on another filesystem (a tmpfs /tmp). */
async function moveFile(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    await copyFile(from, to);
    await unlink(from);
  }
}

export async function startPerfProfiling(): Promise<Profiling> {
  const version = spawnSync('perf', ['--version'], { encoding: 'utf8' });
  if (version.status !== 0) {
    throw new Error('--perf needs Linux perf on the PATH (Debian: apt-get install linux-perf)');
  }
  const root = await mkdtemp(join(tmpdir(), 'pgw-bench-perf-'));
  const dataFile = join(root, 'perf.data');
  const pidOf = new Map<number, SystemName>();
  let recorder: ChildProcess | null = null;
  let recordErrors = '';
  return {
    spawnFor: () => ({
      env: {},
      nodeArgs: ['--perf-prof', '--interpreted-frames-native-stack'],
      preload: [],
    }),
    attach(children: Record<SystemName, Child>) {
      for (const system of SYSTEMS) {
        const pid = children[system].process.pid;
        if (pid !== undefined) pidOf.set(pid, system);
      }
      const period = String(SAMPLE_US * 1000); // task-clock counts nanoseconds
      recorder = spawn(
        'perf',
        ['record', '-q', '-e', 'task-clock', '-c', period, '-k', 'CLOCK_MONOTONIC', '-g'].concat([
          '-o',
          dataFile,
          '-p',
          [...pidOf.keys()].join(','),
        ]),
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      recorder.stderr?.on('data', (chunk: Buffer) => (recordErrors += chunk.toString()));
      recorder.once('error', (error) => (recordErrors += String(error)));
    },
    census: () => Promise.resolve(),
    async summarise(phases) {
      // The processes have exited, so perf has too; SIGINT in case one lingers.
      if (recorder !== null && recorder.exitCode === null && recorder.signalCode === null) {
        const exited = new Promise((resolve) => recorder?.once('exit', resolve));
        recorder.kill('SIGINT');
        await exited;
      }
      // V8 writes each dump, and a log of code events per isolate, into its process's working
      // directory: the project's. Those of this run's processes move into the run's directory.
      const ours = new RegExp(
        `^(jit-(${[...pidOf.keys()].join('|')})\\.dump|isolate-0x[0-9a-f]+-(${[...pidOf.keys()].join('|')})-v8\\.log)$`,
      );
      for (const name of (await readdir(PROJECT)).filter((n) => ours.test(n))) {
        await moveFile(join(PROJECT, name), join(root, name));
      }
      const jitCode = new Map<number, JitCode>();
      for (const pid of pidOf.keys()) {
        const code = JitCode.read(join(root, `jit-${pid}.dump`));
        if (code === null)
          throw new Error(
            `bench --perf: no jitdump of process ${pid} (was it started with --perf-prof?)`,
          );
        jitCode.set(pid, code);
      }
      const byPhase = new Map<PhaseResult, Map<string, number>>();
      const hotByPhase = new Map<PhaseResult, Map<string, number>>();
      await eachSample(dataFile, jitCode, (sample) => {
        const system = pidOf.get(sample.pid);
        const phase = phases.find(
          (p) =>
            p.system === system &&
            p.windowsUs.some((w) => sample.timeUs >= w.from && sample.timeUs < w.to),
        );
        if (phase === undefined) return;
        const layers = byPhase.get(phase) ?? new Map<string, number>();
        const layer = layerOfSample(sample);
        layers.set(layer, (layers.get(layer) ?? 0) + SAMPLE_US);
        byPhase.set(phase, layers);
        if (phase.system !== 'product') return;
        const functions = hotByPhase.get(phase) ?? new Map<string, number>();
        const fn = ownFunction(sample);
        functions.set(fn, (functions.get(fn) ?? 0) + SAMPLE_US);
        hotByPhase.set(phase, functions);
      });
      if (byPhase.size === 0) {
        throw new Error(
          `bench --perf: perf recorded no samples of the measured phases\n${recordErrors}`,
        );
      }
      const text = [
        `\nperf: CPU per request by layer (${root}: perf.data, and jit-<pid>.dump for the names of JavaScript code)`,
        ...report(phases, byPhase),
        ...hotFunctions(hotByPhase),
      ];
      await writeFile(join(root, 'summary.txt'), text.join('\n'));
      return text.join('\n');
    },
  };
}

/** Per phase, µs of CPU per request for each layer, the three systems side by side. */
function report(phases: PhaseResult[], byPhase: Map<PhaseResult, Map<string, number>>): string[] {
  const out: string[] = [];
  const keys = [...new Set(phases.map((p) => `${p.kind}/${p.concurrency}`))];
  for (const key of keys) {
    const columns = SYSTEMS.map((s) =>
      phases.find((p) => `${p.kind}/${p.concurrency}` === key && p.system === s),
    );
    const first = columns.find((p) => p !== undefined);
    if (first === undefined) continue;
    const perLayer = new Map<string, Array<number | undefined>>();
    const totals: Array<number | undefined> = [];
    columns.forEach((phase, i) => {
      const layers = phase === undefined ? undefined : byPhase.get(phase);
      if (phase === undefined || layers === undefined) return;
      const n = Math.max(1, phase.load.done);
      totals[i] = 0;
      for (const [layer, us] of layers) {
        const row = perLayer.get(layer) ?? [];
        row[i] = us / n;
        perLayer.set(layer, row);
        totals[i] = (totals[i] ?? 0) + us / n;
      }
    });
    const cell = (v: number | undefined) => (v === undefined ? '-' : fixed(v, 0)).padStart(10);
    const rows = [...perLayer].sort((a, b) => (b[1][0] ?? 0) - (a[1][0] ?? 0));
    out.push(
      `  ${first.kind} c${first.concurrency}: µs of CPU per request${''.padEnd(19)}${SYSTEMS.map((s) => s.padStart(10)).join('')}`,
      ...rows
        .filter(([, values]) => values.some((v) => (v ?? 0) >= 10))
        .map(([layer, values]) => `    ${layer.padEnd(60)}${values.map(cell).join('')}`),
      `    ${'total'.padEnd(60)}${[0, 1, 2].map((i) => cell(totals[i])).join('')}`,
    );
  }
  return out;
}

/** Per product phase, where in the project's own code the CPU went (what it called included). */
function hotFunctions(byPhase: Map<PhaseResult, Map<string, number>>): string[] {
  const out: string[] = [];
  for (const [phase, functions] of byPhase) {
    const n = Math.max(1, phase.load.done);
    out.push(
      `  product ${phase.kind} c${phase.concurrency}: the project's own functions, µs per request`,
    );
    for (const [fn, us] of [...functions]
      .filter(([f]) => f !== '(elsewhere)')
      .sort((a, b) => b[1] - a[1])
      .slice(0, HOT_FUNCTIONS)) {
      out.push(`    ${fixed(us / n, 0).padStart(6)}  ${fn}`);
    }
  }
  return out;
}
