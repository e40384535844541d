/**
 * One measured phase: a load against one system, bracketed by the database's counters and the
 * processes' CPU time, with its window on the monotonic clock kept so a CPU profile can be cut
 * to it. A phase run in several rounds (interleaved with the other systems') is merged back.
 */
import type pg from 'pg';
import { between, readCounters, type Counters, type PhaseCounts } from './counters.ts';
import { runLoad, type LoadResult } from './load.ts';
import { cpuBetween, snapshotCpu, type CpuSpan } from './process-cpu.ts';
import type { SystemName, Target } from './targets.ts';

export type PhaseKind = 'new' | 'replay' | 'storm';

export interface PhaseResult {
  system: SystemName;
  kind: PhaseKind;
  concurrency: number;
  load: LoadResult;
  counts: PhaseCounts;
  cpu: CpuSpan;
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

export interface PhaseSpec {
  kind: PhaseKind;
  target: Target;
  concurrency: number;
  count: number;
  key: (i: number) => string;
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

export async function measuredPhase(
  ctx: PhaseContext,
  phase: PhaseSpec,
  before?: Counters,
): Promise<{ result: PhaseResult; after: Counters }> {
  const system = phase.target.name;
  const pids = { system: ctx.pidOf(system), psp: ctx.pspPid };
  const start = before ?? (await readCounters(ctx.db, ctx.dbName));
  const cpuBefore = await snapshotCpu({ db: ctx.db, dbName: ctx.dbName, pids });
  const from = nowUs();
  const load = await runLoad({
    target: phase.target,
    concurrency: phase.concurrency,
    count: phase.count,
    limitMs: ctx.limitMs,
    key: phase.key,
  });
  const to = nowUs();
  const cpuAfter = await snapshotCpu({ db: ctx.db, dbName: ctx.dbName, pids });
  const after = await readCounters(ctx.db, ctx.dbName);
  return {
    result: {
      system,
      kind: phase.kind,
      concurrency: phase.concurrency,
      load,
      counts: between(start, after),
      cpu: cpuBetween({ before: cpuBefore, after: cpuAfter, pids }),
      windowsUs: [{ from, to }],
    },
    after,
  };
}

function mergeLoads(a: LoadResult, b: LoadResult): LoadResult {
  return {
    done: a.done + b.done,
    seconds: a.seconds + b.seconds,
    latenciesMs: [...a.latenciesMs, ...b.latenciesMs],
    replayed: a.replayed + b.replayed,
    inUse: a.inUse + b.inUse,
    errors: a.errors + b.errors,
    errorSamples: [...a.errorSamples, ...b.errorSamples].slice(0, 3),
    succeededKeys: [...a.succeededKeys, ...b.succeededKeys],
    cutShort: a.cutShort || b.cutShort,
  };
}

function mergeCounts(a: PhaseCounts, b: PhaseCounts): PhaseCounts {
  return {
    writes: a.writes + b.writes,
    otherTransactions: a.otherTransactions + b.otherTransactions,
  };
}

/** One phase's rounds as if they had run as one (rates are total requests over total time). */
export function mergeRounds(a: PhaseResult, b: PhaseResult): PhaseResult {
  return {
    ...a,
    load: mergeLoads(a.load, b.load),
    counts: mergeCounts(a.counts, b.counts),
    cpu: {
      systemMs: a.cpu.systemMs + b.cpu.systemMs,
      pspMs: a.cpu.pspMs + b.cpu.pspMs,
      postgresMs: a.cpu.postgresMs + b.cpu.postgresMs,
      loadMs: a.cpu.loadMs + b.cpu.loadMs,
    },
    windowsUs: [...a.windowsUs, ...b.windowsUs],
  };
}
