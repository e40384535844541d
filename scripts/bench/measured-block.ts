/**
 * One block of a side-by-side comparison (bench:ab, bench:growth): `count` requests to one
 * gateway, with the CPU its process and its database's backends used meanwhile, read from /proc.
 * Only one side is busy at a time, so each block's figures are its own.
 */
import type pg from 'pg';
import { runLoad } from './load.ts';
import { addCosts, Costs, snapshotCosts } from './phase-costs.ts';
import type { Target } from './targets.ts';

/** A block that has not finished by then is cut short and counted as far as it got. */
export const BLOCK_LIMIT_MS = 60_000;

export interface BlockFigures {
  perSecond: number;
  gatewayUs: number;
  postgresUs: number;
}

export async function measuredBlock(spec: {
  target: Target;
  /** The database the gateway uses, and a pool of the bench's own on it. */
  db: { pool: pg.Pool; name: string };
  pids: { system: number; psp: number };
  concurrency: number;
  count: number;
  key: (i: number) => string;
}): Promise<BlockFigures> {
  const costs = { db: spec.db.pool, dbName: spec.db.name, pids: spec.pids };
  const before = await snapshotCosts(costs);
  const load = await runLoad({
    target: spec.target,
    concurrency: spec.concurrency,
    count: spec.count,
    limitMs: BLOCK_LIMIT_MS,
    key: spec.key,
  });
  const name = spec.target.name;
  if (load.errors > 0) throw new Error(`${name}: ${load.errorSamples.join(' | ')}`);
  if (load.done === 0) throw new Error(`${name}: no request answered in a block`);
  const cpu = new Costs();
  addCosts(cpu, before, await snapshotCosts(costs));
  return {
    perSecond: load.done / load.seconds,
    gatewayUs: (cpu.systemMs * 1000) / load.done,
    postgresUs: (cpu.postgresMs * 1000) / load.done,
  };
}
