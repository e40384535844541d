/**
 * `--profile`: the gateway runs under `node --cpu-prof` with the statement census preloaded.
 * After the run, each of the product's phases is cut out of the profile by its time window and
 * reported per request: CPU per layer, and statements sent with their round-trip times.
 */
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Child } from './children.ts';
import { layerTimes, readProfile, type CpuProfile } from './cpu-profile-layers.ts';
import type { PhaseResult } from './measured-phase.ts';
import type { Tally } from './query-census.ts';
import { fixed, rate } from './stats.ts';

/** How long a census snapshot may take to appear after the signal. */
const CENSUS_WAIT_MS = 5_000;
const CENSUS_POLL_MS = 20;
/** Layers under this share of a phase's busy time are folded into "the rest". */
const MINOR_LAYER_SHARE = 0.01;

interface Snapshot {
  atUs: number;
  tallies: Record<string, Tally>;
}

export interface Profiling {
  env: Record<string, string>;
  nodeArgs: string[];
  preload: string[];
  /** A census snapshot of the gateway's statements so far. */
  census(gateway: Child): Promise<void>;
  /** After the gateway has exited (its profile written): the per-phase breakdown, as text. */
  summarise(phases: PhaseResult[]): Promise<string>;
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

async function readCensus(file: string, seq: number): Promise<Record<string, Tally>> {
  const deadline = Date.now() + CENSUS_WAIT_MS;
  while (Date.now() < deadline) {
    const text = await readFile(file, 'utf8').catch(() => '');
    if (text !== '') {
      const parsed = JSON.parse(text) as { seq: number; tallies: Record<string, Tally> };
      if (parsed.seq >= seq) return parsed.tallies;
    }
    await new Promise((resolve) => setTimeout(resolve, CENSUS_POLL_MS));
  }
  throw new Error(`no statement census ${seq} in ${file}`);
}

/** A statement's name in the report: its text on one line, cut short. */
function statementName(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 90);
}

/** Statements sent within the windows: each window's closing snapshot less its opening one. */
function censusDelta(
  snapshots: Snapshot[],
  windows: Array<{ from: number; to: number }>,
): Map<string, Tally> {
  const delta = new Map<string, Tally>();
  for (const window of windows) {
    const from = snapshots.filter((s) => s.atUs <= window.from).at(-1);
    const to = snapshots.find((s) => s.atUs >= window.to);
    if (from === undefined || to === undefined) continue;
    for (const [text, tally] of Object.entries(to.tallies)) {
      const before = from.tallies[text] ?? { count: 0, totalMs: 0 };
      const sum = delta.get(text) ?? { count: 0, totalMs: 0 };
      sum.count += tally.count - before.count;
      sum.totalMs += tally.totalMs - before.totalMs;
      delta.set(text, sum);
    }
  }
  return delta;
}

function censusLines(spec: { delta: Map<string, Tally>; requests: number }): string[] {
  const rows: Array<{ name: string; perRequest: number; meanMs: number }> = [];
  let total = 0;
  for (const [text, tally] of spec.delta) {
    if (tally.count === 0) continue;
    total += tally.count;
    const meanMs = tally.totalMs / tally.count;
    rows.push({ name: statementName(text), perRequest: tally.count / spec.requests, meanMs });
  }
  rows.sort((a, b) => b.perRequest - a.perRequest);
  return [
    `    statements per request: ${fixed(total / spec.requests, 2)} (round trip as the gateway sees it, event-loop delay included)`,
    ...rows.map(
      (r) =>
        `      ${fixed(r.perRequest, 2).padStart(5)} × ${fixed(r.meanMs, 2).padStart(6)} ms  ${r.name}`,
    ),
  ];
}

function layerLines(spec: { profile: CpuProfile; phase: PhaseResult }): string[] {
  const { phase } = spec;
  const times = layerTimes(spec.profile, phase.windowsUs);
  const n = Math.max(1, phase.load.done);
  const busy = times.busyUs;
  const lines = [
    `    gateway CPU per request: ${fixed(busy / n / 1000, 2)} ms (busy ${fixed((100 * busy) / times.windowUs, 0)}% of the phase's wall time; ${fixed(rate(phase.load), 0)} /s)`,
  ];
  const sorted = [...times.byLayer]
    .filter(([layer]) => layer !== 'idle')
    .sort((a, b) => b[1] - a[1]);
  let rest = 0;
  for (const [layer, us] of sorted) {
    if (us < busy * MINOR_LAYER_SHARE) {
      rest += us;
      continue;
    }
    lines.push(
      `      ${fixed(us / n, 0).padStart(6)} µs  ${fixed((100 * us) / busy, 1).padStart(5)}%  ${layer}`,
    );
  }
  lines.push(
    `      ${fixed(rest / n, 0).padStart(6)} µs  ${fixed((100 * rest) / busy, 1).padStart(5)}%  the rest (each < 1%)`,
  );
  return lines;
}

export async function startProfiling(): Promise<Profiling> {
  const dir = await mkdtemp(join(tmpdir(), 'pgw-bench-profile-'));
  const censusFile = join(dir, 'statements.json');
  const snapshots: Snapshot[] = [];
  let seq = 0;
  return {
    env: { BENCH_QUERY_CENSUS_FILE: censusFile },
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
    preload: ['./scripts/bench/query-census.ts'],
    async census(gateway) {
      seq += 1;
      const atUs = nowUs();
      gateway.process.kill('SIGUSR2');
      snapshots.push({ atUs, tallies: await readCensus(censusFile, seq) });
    },
    async summarise(phases) {
      const file = (await readdir(dir)).find((name) => name.endsWith('.cpuprofile'));
      const profile = file === undefined ? undefined : readProfile(join(dir, file));
      const out = [`\nprofile of the gateway (${dir}):`];
      for (const phase of phases) {
        out.push(`  ${phase.kind} c${phase.concurrency} (${phase.load.done} requests)`);
        if (profile !== undefined) out.push(...layerLines({ profile, phase }));
        const delta = censusDelta(snapshots, phase.windowsUs);
        out.push(...censusLines({ delta, requests: Math.max(1, phase.load.done) }));
      }
      if (profile === undefined)
        out.push('  (no .cpuprofile was written: did the gateway exit cleanly?)');
      const text = out.join('\n');
      await writeFile(join(dir, 'summary.txt'), text);
      return text;
    },
  };
}
