/**
 * What a phase cost, read around it: the CPU time of each process on the request path, from
 * /proc (the system under test, the sandbox PSP, the PostgreSQL backends serving the bench's
 * database, and the load generator, this process), since on shared cores CPU per request is what
 * throughput ratios come down to; and the writing transactions, as transaction ids assigned,
 * counted the moment they happen (pg_stat_database's commit counts are published up to ten
 * seconds late, so a phase's would trail). Transaction ids are numbered for the whole server, so
 * other databases' transactions are read too, to say how far "writes" can be trusted.
 */
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { BENCH_APPLICATION_NAME } from './scratch-database.ts';

/** USER_HZ: /proc reports CPU time in these ticks; 100 on every Linux this runs on. */
const TICKS_PER_SECOND = 100;

/** What a phase cost; its rounds add up. */
export class Costs {
  systemMs = 0;
  pspMs = 0;
  postgresMs = 0;
  loadMs = 0;
  writes = 0;
  /** WAL written, server-wide like `writes`. */
  walBytes = 0;
  /** Transactions other databases on the server ran meanwhile (0: `writes` is ours alone). */
  otherTransactions = 0;
}

interface Snapshot {
  pids: { system: number; psp: number };
  /** CPU ms per process id. */
  byPid: Map<number, number>;
  selfMs: number;
  xids: number;
  /** pg_current_wal_lsn(), in bytes from the start of the WAL. */
  wal: number;
  others: number;
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

export async function snapshotCosts(spec: {
  db: pg.Pool;
  dbName: string;
  pids: { system: number; psp: number };
}): Promise<Snapshot> {
  const { rows } = await spec.db.query<{
    xids: string;
    wal: string;
    others: string;
    backends: number[];
  }>(
    `SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xids,
            pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS wal,
            (SELECT coalesce(sum(xact_commit + xact_rollback), 0) FROM pg_stat_database
              WHERE datname IS DISTINCT FROM $1)::text AS others,
            ARRAY(SELECT pid FROM pg_stat_activity
                   WHERE datname = $1 AND application_name <> $2) AS backends`,
    [spec.dbName, BENCH_APPLICATION_NAME],
  );
  const row = rows[0];
  const pids = [spec.pids.system, spec.pids.psp, ...(row?.backends ?? [])];
  const self = process.cpuUsage();
  return {
    pids: spec.pids,
    byPid: new Map(pids.map((pid) => [pid, cpuMs(pid)])),
    selfMs: (self.user + self.system) / 1000,
    xids: Number(row?.xids),
    wal: Number(row?.wal),
    others: Number(row?.others),
  };
}

/**
 * Adds what was spent between two snapshots to `costs`. PostgreSQL backends are those connected
 * at the end (a backend that opened during the phase counts from zero; one that closed during
 * it is missed).
 */
export function addCosts(costs: Costs, before: Snapshot, after: Snapshot): void {
  const { system, psp } = after.pids;
  const delta = (pid: number) => (after.byPid.get(pid) ?? 0) - (before.byPid.get(pid) ?? 0);
  costs.systemMs += delta(system);
  costs.pspMs += delta(psp);
  for (const pid of after.byPid.keys())
    if (pid !== system && pid !== psp) costs.postgresMs += delta(pid);
  costs.loadMs += after.selfMs - before.selfMs;
  costs.writes += after.xids - before.xids;
  costs.walBytes += after.wal - before.wal;
  costs.otherTransactions += after.others - before.others;
}
