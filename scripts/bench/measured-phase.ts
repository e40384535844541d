/**
 * One measured phase: a load against one system, bracketed by what it cost (phase-costs.ts),
 * with its window on the monotonic clock kept so a CPU profile can be cut to it. A phase run in
 * several rounds (interleaved with the other systems') adds up into one result.
 */
import type pg from 'pg';
import { addLoads, runLoad, type LoadResult } from './load.ts';
import { addCosts, costsBetween, snapshotCosts, type Costs } from './phase-costs.ts';
import type { SystemName, Target } from './targets.ts';

export type PhaseKind = 'new' | 'replay' | 'storm';

export interface PhaseResult {
  system: SystemName;
  kind: PhaseKind;
  concurrency: number;
  load: LoadResult;
  costs: Costs;
  /** The load's windows on the monotonic clock, in µs (what V8's CPU profiles use). */
  windowsUs: Array<{ from: number; to: number }>;
}

export interface PhaseContext {
  db: pg.Pool;
  dbName: string;
  pspPid: number;
  pidOf: (system: SystemName) => number;
  limitMs: number;
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

export async function measuredPhase(
  ctx: PhaseContext,
  phase: {
    kind: PhaseKind;
    target: Target;
    concurrency: number;
    count: number;
    key: (i: number) => string;
  },
): Promise<PhaseResult> {
  const system = phase.target.name;
  const costSpec = {
    db: ctx.db,
    dbName: ctx.dbName,
    pids: { system: ctx.pidOf(system), psp: ctx.pspPid },
  };
  const before = await snapshotCosts(costSpec);
  const from = nowUs();
  const load = await runLoad({ ...phase, limitMs: ctx.limitMs });
  const to = nowUs();
  const costs = costsBetween(before, await snapshotCosts(costSpec), costSpec);
  return {
    system,
    kind: phase.kind,
    concurrency: phase.concurrency,
    load,
    costs,
    windowsUs: [{ from, to }],
  };
}

/** One phase's rounds as if they had run as one. */
export function addRounds(a: PhaseResult, b: PhaseResult): PhaseResult {
  return {
    ...a,
    load: addLoads(a.load, b.load),
    costs: addCosts(a.costs, b.costs),
    windowsUs: [...a.windowsUs, ...b.windowsUs],
  };
}
