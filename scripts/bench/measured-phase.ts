/**
 * One measured phase: a load against one system, bracketed by what it cost (phase-costs.ts),
 * with its windows on the monotonic clock kept so a CPU profile can be cut to them.
 */
import type pg from 'pg';
import { LoadResult, runLoad } from './load.ts';
import { addCosts, Costs, snapshotCosts } from './phase-costs.ts';
import type { SystemName, Target } from './targets.ts';

export type PhaseKind = 'new' | 'replay' | 'storm';

/** One phase of one system at one concurrency: its rounds add up here. */
export class PhaseResult {
  readonly load = new LoadResult();
  readonly costs = new Costs();
  /** The load's windows on the monotonic clock, in µs (what V8's CPU profiles use). */
  readonly windowsUs: Array<{ from: number; to: number }> = [];

  constructor(
    readonly system: SystemName,
    readonly kind: PhaseKind,
    readonly concurrency: number,
  ) {}
}

export interface PhaseContext {
  db: pg.Pool;
  dbName: string;
  pspPid: number;
  pidOf: (system: SystemName) => number;
  limitMs: number;
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

/** Measures one round of a phase, added to its earlier rounds (interleaved with other systems'). */
export async function measuredPhase(
  ctx: PhaseContext,
  phase: {
    kind: PhaseKind;
    target: Target;
    concurrency: number;
    count: number;
    key: (i: number) => string;
  },
  earlier?: PhaseResult,
): Promise<PhaseResult> {
  const { kind, concurrency, target } = phase;
  const result = earlier ?? new PhaseResult(target.name, kind, concurrency);
  const pids = { system: ctx.pidOf(target.name), psp: ctx.pspPid };
  const snapshot = () => snapshotCosts({ db: ctx.db, dbName: ctx.dbName, pids });
  const before = await snapshot();
  const from = nowUs();
  await runLoad({ ...phase, limitMs: ctx.limitMs }, result.load);
  result.windowsUs.push({ from, to: nowUs() });
  addCosts(result.costs, before, await snapshot());
  return result;
}
