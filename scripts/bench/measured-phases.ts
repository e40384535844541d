/**
 * The measured phases. For each concurrency and each kind of phase (new keys, replays, storms),
 * the systems take turns in rounds, each round starting with the next system, so that drift of
 * a shared machine (other work starting or stopping) falls on every system alike instead of on
 * whichever happened to run last. A round is a load against one system bracketed by what it cost
 * (phase-costs.ts), its window on the monotonic clock kept so a CPU profile can be cut to it.
 */
import type pg from 'pg';
import type { BenchOptions } from './args.ts';
import { LoadResult, runLoad } from './load.ts';
import { addCosts, Costs, snapshotCosts } from './phase-costs.ts';
import { outboxBacklog, waitForDrain } from './outbox-backlog.ts';
import { checkStorm, type StormOutcome } from './storm-check.ts';
import type { SystemName, Target } from './targets.ts';

export type PhaseKind = 'new' | 'replay' | 'storm';

/** One phase of one system at one concurrency: its rounds add up here. */
export class PhaseResult {
  readonly load = new LoadResult();
  /** From the load's start to its end: the request path. */
  readonly costs = new Costs();
  /**
   * The product's outbox work the load left behind, from the load's end until the dispatcher
   * had drained it (nothing for the baselines, which have no outbox).
   */
  readonly outbox = new Costs();
  /** The largest backlog any round left when its load ended, and the longest drain. */
  readonly backlog = { pending: 0, oldestAgeSeconds: 0, drainMs: 0, drained: true };
  /** The load's windows on the monotonic clock, in µs (what V8's CPU profiles use). */
  readonly windowsUs: Array<{ from: number; to: number }> = [];

  constructor(
    readonly system: SystemName,
    readonly kind: PhaseKind,
    readonly concurrency: number,
  ) {}
}

export interface PhaseInputs {
  db: pg.Pool;
  dbName: string;
  options: BenchOptions;
  targets: Target[];
  psp: { url: string; pid: number };
  pidOf: (system: SystemName) => number;
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
  inputs: PhaseInputs,
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

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

/** One round of `phase`, added to its earlier rounds. */
async function measureRound(
  inputs: PhaseInputs,
  phase: PhaseResult,
  load: { target: Target; count: number; key: (i: number) => string },
): Promise<void> {
  const pids = { system: inputs.pidOf(phase.system), psp: inputs.psp.pid };
  const snapshot = () => snapshotCosts({ db: inputs.db, dbName: inputs.dbName, pids });
  const before = await snapshot();
  const from = nowUs();
  const limitMs = inputs.options.phaseLimitMs;
  await runLoad({ ...load, concurrency: phase.concurrency, limitMs }, phase.load);
  phase.windowsUs.push({ from, to: nowUs() });
  const loadEnded = await snapshot();
  addCosts(phase.costs, before, loadEnded);
  if (phase.system !== 'product') return;
  const left = await outboxBacklog(inputs.db);
  const drainMs = await waitForDrain(inputs.db);
  addCosts(phase.outbox, loadEnded, await snapshot());
  const { backlog } = phase;
  backlog.pending = Math.max(backlog.pending, left.pending);
  backlog.oldestAgeSeconds = Math.max(backlog.oldestAgeSeconds, left.oldestAgeSeconds);
  backlog.drainMs = Math.max(backlog.drainMs, drainMs ?? Infinity);
  backlog.drained &&= drainMs !== null;
}

export async function runPhases(
  inputs: PhaseInputs,
): Promise<{ phases: PhaseResult[]; storms: StormOutcome[] }> {
  const { options } = inputs;
  const phases: PhaseResult[] = [];
  const storms: StormOutcome[] = [];
  for (const c of options.concurrencies) {
    for (const kind of ['new', 'replay', 'storm'] as const) {
      const runs = inputs.targets
        .filter((target) => target.idempotent || kind !== 'replay')
        .map((target) => ({
          target,
          phase: new PhaseResult(target.name, kind, c),
          stormKeys: [] as string[],
        }));
      const since = new Date(Date.now() - 1_000);
      for (let round = 0; round < options.rounds; round++) {
        for (const { target, phase, stormKeys } of rotated(runs, round)) {
          const work = workload(inputs, { kind, target, c, round });
          await measureRound(inputs, phase, { target, ...work });
          stormKeys.push(...work.stormKeys);
          inputs.progress(
            `${target.name} ${kind} c${c}: round ${round + 1}/${options.rounds} done`,
          );
        }
      }
      phases.push(...runs.map((run) => run.phase));
      for (const { target, stormKeys: keys } of kind === 'storm' ? runs : []) {
        const storm = { pspUrl: inputs.psp.url, db: inputs.db, concurrency: c, since };
        storms.push(await checkStorm({ ...storm, system: target.name, keys }));
      }
    }
  }
  return { phases, storms };
}
