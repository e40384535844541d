/**
 * Commits and writing transactions per request, counted (not timed) in short phases of their
 * own: every connection of the systems is closed before and after, so every commit has been
 * published to `pg_stat_database` when it is read (see counters.ts). Cold connections cost
 * time, which is why these phases are not the timed ones.
 */
import type pg from 'pg';
import { between, readCounters } from './counters.ts';
import { runLoad } from './load.ts';
import type { SystemName, Target } from './targets.ts';

/** Enough requests that the closed connections' own start-up transactions are noise (< 0.05). */
const COUNTED_REQUESTS = 400;
const COUNTED_CONCURRENCY = 16;

export interface TransactionCount {
  system: SystemName;
  kind: 'new' | 'replay';
  requests: number;
  commitsPerRequest: number;
  writesPerRequest: number;
  /** Transactions of other databases meanwhile (0: the writes figure is ours alone). */
  otherTransactions: number;
}

export async function countTransactions(spec: {
  db: pg.Pool;
  dbName: string;
  targets: Target[];
  replayKeys: Map<SystemName, string[]>;
  limitMs: number;
}): Promise<TransactionCount[]> {
  const read = { dbName: spec.dbName, statements: false, flush: true };
  const counts: TransactionCount[] = [];
  for (const target of spec.targets) {
    for (const kind of target.idempotent ? (['new', 'replay'] as const) : (['new'] as const)) {
      const replays = spec.replayKeys.get(target.name) ?? [];
      const before = await readCounters(spec.db, read);
      const load = await runLoad({
        target,
        concurrency: COUNTED_CONCURRENCY,
        count: COUNTED_REQUESTS,
        limitMs: spec.limitMs,
        key: (i) =>
          kind === 'new' ? `${target.name}-counted-${i}` : (replays[i % replays.length] ?? 'none'),
      });
      const delta = between(before, await readCounters(spec.db, read));
      const n = Math.max(1, load.done);
      counts.push({
        system: target.name,
        kind,
        requests: load.done,
        commitsPerRequest: delta.commits / n,
        writesPerRequest: delta.writes / n,
        otherTransactions: delta.otherTransactions,
      });
    }
  }
  return counts;
}
