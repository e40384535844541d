/**
 * Writing transactions per request, read from PostgreSQL around each phase: transaction ids
 * assigned, which only writes consume, counted the moment they happen. (pg_stat_database's commit
 * counts are not: a backend publishes them up to ten seconds late, so a phase's would trail.)
 * Transaction ids are numbered for the whole server, so other databases' transactions are read
 * too, to say how far "writes" can be trusted on a shared server.
 */
import type pg from 'pg';

export interface Counters {
  xids: number;
  /** Commits and rollbacks of every other database on the server. */
  otherTransactions: number;
}

export interface PhaseCounts {
  writes: number;
  /** Transactions other databases ran during the phase (0: the xid figure is ours alone). */
  otherTransactions: number;
}

export async function readCounters(db: pg.Pool, dbName: string): Promise<Counters> {
  const { rows } = await db.query<{ xids: string; others: string }>(
    `SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xids,
            (SELECT coalesce(sum(xact_commit + xact_rollback), 0) FROM pg_stat_database
              WHERE datname IS DISTINCT FROM $1)::text AS others`,
    [dbName],
  );
  const row = rows[0];
  return {
    xids: Number(row?.xids),
    otherTransactions: Number(row?.others),
  };
}

/** What happened between two readings. */
export function between(before: Counters, after: Counters): PhaseCounts {
  return {
    writes: after.xids - before.xids,
    otherTransactions: after.otherTransactions - before.otherTransactions,
  };
}
