/**
 * The order of the measured phases. For each concurrency and each kind of phase (new keys,
 * replays, storms), the systems take turns in rounds, each round starting with the next system,
 * so that drift of a shared machine (other work starting or stopping) falls on every system
 * alike instead of on whichever happened to run last.
 */
import type { BenchOptions } from './args.ts';
import {
  measuredPhase,
  type PhaseContext,
  type PhaseKind,
  type PhaseResult,
} from './measured-phase.ts';
import { checkStorm, type StormOutcome } from './storm-check.ts';
import type { SystemName, Target } from './targets.ts';

export interface PlanInputs {
  ctx: PhaseContext;
  options: BenchOptions;
  targets: Target[];
  pspUrl: string;
  /** Keys each system has answered already (the warm-up's): what its replays replay. */
  replayKeys: Map<SystemName, string[]>;
  progress: (message: string) => void;
}

/** In round r, the systems in turn from the r-th. */
function rotated<T>(items: T[], round: number): T[] {
  const k = round % Math.max(1, items.length);
  return [...items.slice(k), ...items.slice(0, k)];
}

/** A phase's requests in one round: new keys, the warm-up's (replays), or storms of a few keys. */
function workload(
  inputs: PlanInputs,
  phase: { kind: PhaseKind; target: Target; c: number; round: number },
) {
  const { requests, rounds, stormKeys, stormCopies } = inputs.options;
  const prefix = `${phase.target.name}-${phase.kind}-c${phase.c}-r${phase.round}`;
  const count = Math.ceil(requests / rounds);
  switch (phase.kind) {
    case 'new':
      return { count, key: (i: number) => `${prefix}-${i}`, stormKeys: [] };
    case 'replay': {
      const warm = inputs.replayKeys.get(phase.target.name) ?? [];
      const key = (i: number) => warm[(i + phase.round * requests) % warm.length] ?? 'none';
      return { count, key, stormKeys: [] };
    }
    case 'storm': {
      const keys = Array.from(
        { length: Math.ceil(stormKeys / rounds) },
        (_, k) => `${prefix}-${k}`,
      );
      const key = (i: number) => keys[Math.floor(i / stormCopies)] ?? 'none';
      return { count: keys.length * stormCopies, key, stormKeys: keys };
    }
  }
}

export async function runPlan(
  inputs: PlanInputs,
): Promise<{ phases: PhaseResult[]; storms: StormOutcome[] }> {
  const { ctx, options } = inputs;
  const phases = new Map<string, PhaseResult>();
  const storms: StormOutcome[] = [];
  for (const c of options.concurrencies) {
    for (const kind of ['new', 'replay', 'storm'] as const) {
      const targets =
        kind === 'replay' ? inputs.targets.filter((t) => t.idempotent) : inputs.targets;
      const since = new Date(Date.now() - 1_000);
      const stormKeys = new Map<SystemName, string[]>();
      for (let round = 0; round < options.rounds; round++) {
        for (const target of rotated(targets, round)) {
          const work = workload(inputs, { kind, target, c, round });
          const id = `${target.name}/${kind}/${c}`;
          const spec = { kind, target, concurrency: c, ...work };
          phases.set(id, await measuredPhase(ctx, spec, phases.get(id)));
          stormKeys.set(target.name, [...(stormKeys.get(target.name) ?? []), ...work.stormKeys]);
          inputs.progress(
            `${target.name} ${kind} c${c}: round ${round + 1}/${options.rounds} done`,
          );
        }
      }
      if (kind !== 'storm') continue;
      for (const [system, keys] of stormKeys) {
        const check = { pspUrl: inputs.pspUrl, db: ctx.db, system, concurrency: c, keys, since };
        storms.push(await checkStorm(check));
      }
    }
  }
  return { phases: [...phases.values()], storms };
}
