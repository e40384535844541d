/**
 * CPU time of the processes on the request path, read from /proc around each phase: the system
 * under test, the sandbox PSP, the PostgreSQL backends serving the bench's database, and the
 * load generator (this process). On two shared cores, CPU per request is what throughput ratios
 * come down to.
 */
import { readFileSync } from 'node:fs';
import type pg from 'pg';

/** USER_HZ: /proc reports CPU time in these ticks; 100 on every Linux this runs on. */
const TICKS_PER_SECOND = 100;

export interface CpuSnapshot {
  /** CPU ms per process id. */
  byPid: Map<number, number>;
  /** This process (the load generator), from process.cpuUsage(). */
  selfMs: number;
}

export interface CpuSpan {
  systemMs: number;
  pspMs: number;
  postgresMs: number;
  loadMs: number;
}

function cpuMs(pid: number): number {
  try {
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th of them.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return 0; // gone, or not Linux: counted as nothing rather than guessed
  }
}

async function backendPids(db: pg.Pool, dbName: string): Promise<number[]> {
  const { rows } = await db.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
    [dbName],
  );
  return rows.map((row) => row.pid);
}

export async function snapshotCpu(spec: {
  db: pg.Pool;
  dbName: string;
  pids: { system: number; psp: number };
}): Promise<CpuSnapshot> {
  const byPid = new Map<number, number>();
  for (const pid of [
    spec.pids.system,
    spec.pids.psp,
    ...(await backendPids(spec.db, spec.dbName)),
  ]) {
    byPid.set(pid, cpuMs(pid));
  }
  const self = process.cpuUsage();
  return { byPid, selfMs: (self.user + self.system) / 1000 };
}

/**
 * CPU used between two snapshots. PostgreSQL backends are those connected at the end (a backend
 * that opened during the phase counts from zero; one that closed during it is missed).
 */
export function cpuBetween(span: {
  before: CpuSnapshot;
  after: CpuSnapshot;
  pids: { system: number; psp: number };
}): CpuSpan {
  const { before, after, pids } = span;
  const delta = (pid: number) => (after.byPid.get(pid) ?? 0) - (before.byPid.get(pid) ?? 0);
  let postgresMs = 0;
  for (const pid of after.byPid.keys()) {
    if (pid !== pids.system && pid !== pids.psp) postgresMs += delta(pid);
  }
  return {
    systemMs: delta(pids.system),
    pspMs: delta(pids.psp),
    postgresMs,
    loadMs: after.selfMs - before.selfMs,
  };
}
