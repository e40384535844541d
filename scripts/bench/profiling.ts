/**
 * `--profile`: every system's process (the gateway and both baselines) runs under
 * `node --cpu-prof`. After the run, each phase is cut out of its process's profile by its time
 * windows, and its samples are summed per layer (cpu-profile-layers.ts), µs per request, side by
 * side for the three systems. The .cpuprofile files stay where the report says, to open in
 * Chrome DevTools (Performance → Load profile) or speedscope for functions and call trees.
 *
 * V8 samples on a wall clock: a thread preempted by another process on busy cores is charged
 * to the frame it was in. Read the layers' shares within one run, not their absolute µs.
 */
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { layerTimes, readProfile, type CpuProfile } from './cpu-profile-layers.ts';
import type { PhaseResult } from './measured-phases.ts';
import { fixed } from './stats.ts';
import type { SystemName } from './targets.ts';
import { table } from '../../ops/render.ts';

/** Layers under this many µs per request in every system are left out of the table. */
const MINOR_LAYER_US = 20;
const SYSTEMS: SystemName[] = ['product', 'apollo-reference', 'reference', 'bare'];

export interface Profiling {
  /** Node flags for a system's process. */
  nodeArgs(system: SystemName): string[];
  /** After the processes have exited (their profiles written): the breakdown, as text. */
  summarise(phases: PhaseResult[]): Promise<string>;
}

/** Per layer, µs of CPU per request of each system in one kind of phase at one concurrency. */
function layerTable(phases: PhaseResult[], profiles: Map<SystemName, CpuProfile>): string {
  const perLayer = new Map<string, number[]>();
  const busy = SYSTEMS.map((system, i) => {
    const phase = phases.find((p) => p.system === system);
    const profile = profiles.get(system);
    if (phase === undefined || profile === undefined) return NaN;
    const { byLayer, busyUs } = layerTimes(profile, phase.windowsUs);
    const n = Math.max(1, phase.load.done);
    for (const [layer, us] of byLayer) {
      const row = perLayer.get(layer) ?? SYSTEMS.map(() => NaN);
      row[i] = us / n;
      perLayer.set(layer, row);
    }
    return busyUs / n;
  });
  perLayer.delete('idle');
  const out = table(['µs of CPU per request', ...SYSTEMS], { compact: true });
  const rows = [...perLayer].sort(([, a], [, b]) => (b[0] || 0) - (a[0] || 0));
  for (const [layer, values] of rows.filter(([, v]) => v.some((us) => us >= MINOR_LAYER_US))) {
    out.push([layer, ...values.map((us) => fixed(us, 0))]);
  }
  out.push(['total (busy)', ...busy.map((us) => fixed(us, 0))]);
  return out.toString();
}

export async function startProfiling(): Promise<Profiling> {
  const root = await mkdtemp(join(tmpdir(), 'pgw-bench-profile-'));
  return {
    nodeArgs: (system) => ['--cpu-prof', `--cpu-prof-dir=${join(root, system)}`],
    async summarise(phases) {
      const profiles = new Map<SystemName, CpuProfile>();
      const out = ['', 'CPU profiles (open in Chrome DevTools → Performance, or speedscope):'];
      for (const system of SYSTEMS) {
        // The main thread's: `CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`, thread 0.
        const dir = join(root, system);
        const name = (await readdir(dir).catch(() => [])).find((n) =>
          /\.\d+\.0\.\d+\.cpuprofile$/.test(n),
        );
        if (name !== undefined) profiles.set(system, readProfile(join(dir, name)));
        out.push(
          `  ${system}: ${name === undefined ? `no main-thread .cpuprofile in ${dir}` : join(dir, name)}`,
        );
      }
      for (const key of new Set(phases.map((p) => `${p.kind} c${p.concurrency}`))) {
        const same = phases.filter((p) => `${p.kind} c${p.concurrency}` === key);
        out.push(`${key}, per layer:`, layerTable(same, profiles));
      }
      return out.join('\n');
    },
  };
}
