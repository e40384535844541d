/**
 * The order of the measured phases. For each concurrency and each kind of phase (new keys,
 * replays, storms), the systems take turns in rounds, each round starting with the next system,
 * so that drift of a shared machine (other work starting or stopping) falls on every system
 * alike instead of on whichever happened to run last.
 */
import type { BenchOptions } from './args.ts';
import type { Counters } from './counters.ts';
import {
  measuredPhase,
  mergeRounds,
  type PhaseContext,
  type PhaseKind,
  type PhaseResult,
} from './measured-phase.ts';
import type { StormOutcome } from './report.ts';
import { countStorm } from './storm-check.ts';
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

function keyFor(
  inputs: PlanInputs,
  phase: { kind: PhaseKind; target: Target; c: number; round: number },
): (i: number) => string {
  const { options } = inputs;
  const prefix = `${phase.target.name}-${phase.kind}-c${phase.c}-r${phase.round}`;
  switch (phase.kind) {
    case 'new':
      return (i) => `${prefix}-${i}`;
    case 'replay': {
      const keys = inputs.replayKeys.get(phase.target.name) ?? [];
      return (i) => keys[(i + phase.round * options.requests) % keys.length] ?? 'none';
    }
    case 'storm':
      return (i) => `${prefix}-${Math.floor(i / options.stormCopies)}`;
  }
}

function countOf(options: BenchOptions, kind: PhaseKind): number {
  if (kind !== 'storm') return Math.ceil(options.requests / options.rounds);
  return Math.ceil(options.stormKeys / options.rounds) * options.stormCopies;
}

export async function runPlan(
  inputs: PlanInputs,
): Promise<{ phases: PhaseResult[]; storms: StormOutcome[] }> {
  const { ctx, options, targets } = inputs;
  const merged = new Map<string, PhaseResult>();
  const stormKeys = new Map<SystemName, string[]>();
  const storms: StormOutcome[] = [];
  let counters: Counters | undefined;
  for (const c of options.concurrencies) {
    for (const kind of ['new', 'replay', 'storm'] as const) {
      const runs = kind === 'replay' ? targets.filter((t) => t.idempotent) : targets;
      const since = new Date(Date.now() - 1_000);
      stormKeys.clear();
      for (let round = 0; round < options.rounds; round++) {
        for (const target of rotated(runs, round)) {
          const key = keyFor(inputs, { kind, target, c, round });
          const count = countOf(options, kind);
          const spec = { kind, target, concurrency: c, count, key };
          const { result, after } = await measuredPhase(ctx, spec, counters);
          counters = after;
          const id = `${target.name}/${kind}/${c}`;
          const known = merged.get(id);
          merged.set(id, known === undefined ? result : mergeRounds(known, result));
          if (kind === 'storm') {
            const keys = Array.from({ length: count / options.stormCopies }, (_, k) =>
              key(k * options.stormCopies),
            );
            stormKeys.set(target.name, [...(stormKeys.get(target.name) ?? []), ...keys]);
          }
          inputs.progress(
            `${target.name} ${kind} c${c} round ${round + 1}/${options.rounds}: ${result.load.done} in ${result.load.seconds.toFixed(1)} s`,
          );
        }
      }
      for (const [system, keys] of stormKeys) {
        const count = await countStorm({ pspUrl: inputs.pspUrl, db: ctx.db, system, keys, since });
        storms.push({ system, concurrency: c, count });
      }
    }
  }
  return { phases: [...merged.values()], storms };
}
