/**
 * Transactions and statements per request, read from PostgreSQL around each phase: writing
 * transactions (transaction ids assigned, which only writes consume) and every statement where
 * pg_stat_statements is loaded, both counted the moment they happen. (pg_stat_database's commit
 * counts are not: a backend publishes them up to ten seconds late, so a phase's would trail.)
 * Transaction ids are numbered for the whole server, so other databases' transactions are read
 * too, to say how far "writes" can be trusted on a shared server.
 */
import type pg from 'pg';

/** Marks the bench's own statements, so they are not counted as the systems'. */
export const BENCH_SQL = '/* pgw-bench */';

export interface StatementTally {
  query: string;
  calls: number;
  /** Execution time; planning time (0 unless pg_stat_statements.track_planning) apart. */
  totalMs: number;
  planMs: number;
}

export interface Counters {
  xids: number;
  /** Commits and rollbacks of every other database on the server. */
  otherTransactions: number;
  /** By queryid; undefined without pg_stat_statements. */
  statements: Map<string, StatementTally> | undefined;
}

export interface PhaseCounts {
  writes: number;
  /** Transactions other databases ran during the phase (0: the xid figure is ours alone). */
  otherTransactions: number;
  /** Statement calls in the phase, by statement; undefined without pg_stat_statements. */
  statements: StatementTally[] | undefined;
}

async function readStatements(db: pg.Pool, dbName: string): Promise<Map<string, StatementTally>> {
  const { rows } = await db.query<{
    id: string;
    query: string;
    calls: number;
    ms: number;
    plan_ms: number;
  }>(
    `${BENCH_SQL} SELECT s.queryid::text AS id, s.query, s.calls::float8 AS calls,
            s.total_exec_time AS ms, s.total_plan_time AS plan_ms
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
      WHERE d.datname = $1`,
    [dbName],
  );
  return new Map(
    rows.map((r) => [r.id, { query: r.query, calls: r.calls, totalMs: r.ms, planMs: r.plan_ms }]),
  );
}

export async function readCounters(
  db: pg.Pool,
  spec: { dbName: string; statements: boolean },
): Promise<Counters> {
  const { rows } = await db.query<{ xids: string; others: string }>(
    `${BENCH_SQL} SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xids,
            (SELECT coalesce(sum(xact_commit + xact_rollback), 0) FROM pg_stat_database
              WHERE datname IS DISTINCT FROM $1)::text AS others`,
    [spec.dbName],
  );
  const row = rows[0];
  return {
    xids: Number(row?.xids),
    otherTransactions: Number(row?.others),
    statements: spec.statements ? await readStatements(db, spec.dbName) : undefined,
  };
}

function statementDelta(before: Counters, after: Counters): StatementTally[] | undefined {
  if (before.statements === undefined || after.statements === undefined) return undefined;
  const delta: StatementTally[] = [];
  for (const [id, tally] of after.statements) {
    const was = before.statements.get(id);
    const calls = tally.calls - (was?.calls ?? 0);
    if (tally.query.includes(BENCH_SQL)) continue;
    if (calls > 0) {
      const totalMs = tally.totalMs - (was?.totalMs ?? 0);
      delta.push({ ...tally, calls, totalMs, planMs: tally.planMs - (was?.planMs ?? 0) });
    }
  }
  return delta;
}

/** What happened between two readings (the bench's own few statements included). */
export function between(before: Counters, after: Counters): PhaseCounts {
  return {
    writes: after.xids - before.xids,
    otherTransactions: after.otherTransactions - before.otherTransactions,
    statements: statementDelta(before, after),
  };
}
