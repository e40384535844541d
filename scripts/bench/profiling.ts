/**
 * `--profile`: every system's process (the gateway and both baselines) runs under
 * `node --cpu-prof`. After the run, each phase is cut out of its process's profile by its time
 * windows, and its samples are summed per layer (cpu-profile-layers.ts), µs per request, side by
 * side for the three systems. The .cpuprofile files stay where the report says, to open in
 * Chrome DevTools (Performance → Load profile) or speedscope for functions and call trees.
 *
 * V8 samples on a wall clock: a thread preempted by another process on two busy cores is charged
 * to the frame it was in. Read the layers' shares within one run, not their absolute µs.
 */
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { layerTimes, readProfile, type CpuProfile } from './cpu-profile-layers.ts';
import type { PhaseResult } from './measured-phase.ts';
import type { SystemName } from './targets.ts';
import { fixed } from './stats.ts';

/** Layers under this many µs per request in every system are left out of the table. */
const MINOR_LAYER_US = 20;

const SYSTEMS: SystemName[] = ['product', 'reference', 'bare'];

export interface Profiling {
  /** Node flags for a system's process. */
  nodeArgs(system: SystemName): string[];
  /** After the processes have exited (their profiles written): the breakdown, as text. */
  summarise(phases: PhaseResult[]): Promise<string>;
}

/** The main thread's profile: `CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`, thread 0. */
async function mainThreadProfile(dir: string): Promise<{ file: string; profile: CpuProfile }> {
  const name = (await readdir(dir)).find((n) => /\.\d+\.0\.\d+\.cpuprofile$/.test(n));
  if (name === undefined) throw new Error(`no main-thread .cpuprofile in ${dir}`);
  const file = join(dir, name);
  return { file, profile: readProfile(file) };
}

/** Per layer, µs per request of each system in one phase. */
function comparison(phases: PhaseResult[], profiles: Map<SystemName, CpuProfile>): string[] {
  const perLayer = new Map<string, Array<number | undefined>>();
  const busy: Array<number | undefined> = [];
  SYSTEMS.forEach((system, i) => {
    const phase = phases.find((p) => p.system === system);
    const profile = profiles.get(system);
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
      .filter(([, values]) => values.some((v) => (v ?? 0) >= MINOR_LAYER_US))
      .map(([layer, values]) => `    ${layer.padEnd(42)}${values.map(cell).join('')}`),
    `    ${'total (busy)'.padEnd(42)}${[0, 1, 2].map((i) => cell(busy[i])).join('')}`,
  ];
}

export async function startProfiling(): Promise<Profiling> {
  const root = await mkdtemp(join(tmpdir(), 'pgw-bench-profile-'));
  return {
    nodeArgs: (system) => ['--cpu-prof', `--cpu-prof-dir=${join(root, system)}`],
    async summarise(phases) {
      const profiles = new Map<SystemName, CpuProfile>();
      const out = ['', 'CPU profiles (open in Chrome DevTools → Performance, or speedscope):'];
      for (const system of SYSTEMS) {
        const found = await mainThreadProfile(join(root, system)).catch((error: unknown) =>
          error instanceof Error ? error : new Error(String(error)),
        );
        if (found instanceof Error) {
          out.push(`  ${system}: ${found.message}`);
          continue;
        }
        const { file, profile } = found;
        profiles.set(system, profile);
        out.push(`  ${system}: ${file}`);
      }
      const keys = [...new Set(phases.map((p) => `${p.kind}/${p.concurrency}`))];
      for (const key of keys) {
        const same = phases.filter((p) => `${p.kind}/${p.concurrency}` === key);
        const first = same[0];
        if (first === undefined) continue;
        out.push(
          `  ${first.kind} c${first.concurrency}, per layer:`,
          ...comparison(same, profiles),
        );
      }
      return out.join('\n');
    },
  };
}
