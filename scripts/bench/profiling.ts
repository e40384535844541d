/**
 * `--profile`: every system's process (the gateway and both baselines) runs under
 * `node --cpu-prof` with the statement census preloaded. After the run, each phase is cut out of
 * its process's profile by its time windows and reported per request: CPU per layer, side by
 * side for the three systems, and the statements sent with their round-trip times.
 */
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Child } from './children.ts';
import { layerTimes, readProfile, type CpuProfile } from './cpu-profile-layers.ts';
import type { PhaseResult } from './measured-phase.ts';
import type { SystemName } from './targets.ts';
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

export interface SpawnSettings {
  env: Record<string, string>;
  nodeArgs: string[];
  preload: string[];
}

export interface Profiling {
  /** How to start a system's process under the profiler and the census. */
  spawnFor(system: SystemName): SpawnSettings;
  /** Once the processes have started (perf follows them by pid). */
  attach?(children: Record<SystemName, Child>): void;
  /** A census snapshot of every profiled process's statements so far. */
  census(children: Record<SystemName, Child>): Promise<void>;
  /** After the processes have exited (their profiles written): the breakdown, as text. */
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
/** A statement's first words; for a round trip of several, each one's first words. */
function statementName(text: string): string {
  const words = (statement: string, n: number) => statement.replace(/\s+/g, ' ').trim().slice(0, n);
  const parts = text.split(' ⏎ ');
  return parts.length === 1 ? words(text, 90) : parts.map((part) => words(part, 28)).join(' ⏎ ');
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
    `    round trips to PostgreSQL per request: ${fixed(total / spec.requests, 2)} (statements sent together count once; time as the gateway sees it, event-loop delay included)`,
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
    `    CPU per request: ${fixed(busy / n / 1000, 2)} ms (busy ${fixed((100 * busy) / times.windowUs, 0)}% of the phase's wall time; ${fixed(rate(phase.load), 0)} /s)`,
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

/** The main thread's profile: `CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`, thread 0. */
async function mainThreadProfile(dir: string): Promise<CpuProfile | undefined> {
  const file = (await readdir(dir)).find((name) => /\.\d+\.0\.\d+\.cpuprofile$/.test(name));
  return file === undefined ? undefined : readProfile(join(dir, file));
}

const SYSTEMS: SystemName[] = ['product', 'reference', 'bare'];

/** Per layer, µs per request of each system in one phase: the comparison the README quotes. */
function comparison(phases: PhaseResult[], profiles: Map<SystemName, CpuProfile>): string[] {
  const columns = SYSTEMS.map((system) => phases.find((p) => p.system === system));
  const perLayer = new Map<string, Array<number | undefined>>();
  const busy: Array<number | undefined> = [];
  columns.forEach((phase, i) => {
    const profile = phase === undefined ? undefined : profiles.get(phase.system);
    if (phase === undefined || profile === undefined) return;
    const times = layerTimes(profile, phase.windowsUs);
    const n = Math.max(1, phase.load.done);
    busy[i] = times.busyUs / n;
    for (const [layer, us] of times.byLayer) {
      if (layer === 'idle') continue;
      const row = perLayer.get(layer) ?? [];
      row[i] = us / n;
      perLayer.set(layer, row);
    }
  });
  const cell = (v: number | undefined) => (v === undefined ? '-' : fixed(v, 0)).padStart(10);
  const rows = [...perLayer].sort((a, b) => (b[1][0] ?? 0) - (a[1][0] ?? 0));
  return [
    `    ${'µs of CPU per request'.padEnd(42)}${SYSTEMS.map((s) => s.padStart(10)).join('')}`,
    ...rows
      .filter(([, values]) => values.some((v) => (v ?? 0) >= 20))
      .map(([layer, values]) => `    ${layer.padEnd(42)}${values.map(cell).join('')}`),
    `    ${'total (busy)'.padEnd(42)}${[0, 1, 2].map((i) => cell(busy[i])).join('')}`,
  ];
}

export async function startProfiling(): Promise<Profiling> {
  const root = await mkdtemp(join(tmpdir(), 'pgw-bench-profile-'));
  const censusFile = (system: SystemName) => join(root, `${system}.statements.json`);
  const snapshots = new Map<SystemName, Snapshot[]>(SYSTEMS.map((s) => [s, []]));
  let seq = 0;
  return {
    spawnFor: (system) => ({
      env: { BENCH_QUERY_CENSUS_FILE: censusFile(system) },
      nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${join(root, system)}`],
      preload: ['./scripts/bench/query-census.ts'],
    }),
    async census(children) {
      seq += 1;
      const atUs = nowUs();
      for (const system of SYSTEMS) children[system].process.kill('SIGUSR2');
      for (const system of SYSTEMS) {
        const tallies = await readCensus(censusFile(system), seq);
        snapshots.get(system)?.push({ atUs, tallies });
      }
    },
    async summarise(phases) {
      const profiles = new Map<SystemName, CpuProfile>();
      for (const system of SYSTEMS) {
        const profile = await mainThreadProfile(join(root, system)).catch(() => undefined);
        if (profile !== undefined) profiles.set(system, profile);
      }
      const out = [`\nprofiles (${root}):`];
      const keys = [...new Set(phases.map((p) => `${p.kind}/${p.concurrency}`))];
      for (const key of keys) {
        const same = phases.filter((p) => `${p.kind}/${p.concurrency}` === key);
        const first = same[0];
        if (first === undefined) continue;
        out.push(`  ${first.kind} c${first.concurrency}: per layer`, ...comparison(same, profiles));
        for (const phase of same) {
          const profile = profiles.get(phase.system);
          out.push(
            `  ${phase.system} ${phase.kind} c${phase.concurrency} (${phase.load.done} requests)`,
          );
          if (profile !== undefined) out.push(...layerLines({ profile, phase }));
          const delta = censusDelta(snapshots.get(phase.system) ?? [], phase.windowsUs);
          out.push(...censusLines({ delta, requests: Math.max(1, phase.load.done) }));
        }
      }
      const text = out.join('\n');
      await writeFile(join(root, 'summary.txt'), text);
      return text;
    },
  };
}
