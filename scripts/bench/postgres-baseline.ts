/**
 * PostgreSQL's own rates, pgbench-style, on the bench's database: one-row INSERT commits, and
 * one indexed read by primary key, from N connections each running one statement at a time.
 * They bound what any design can reach: a new payment needs two commits, a replay one read.
 */
import pg from 'pg';

/** Connections kept free for everyone else on a shared server (other suites, superuser). */
const CONNECTION_RESERVE = 10;

export interface RateResult {
  done: number;
  seconds: number;
  latenciesMs: number[];
  connections: number;
}

export type BaselineKind = 'commit' | 'read';

const SQL: Record<BaselineKind, string> = {
  commit: 'INSERT INTO bench_commits (v) VALUES ($1)',
  read: 'SELECT response::text FROM bench_ref_keys WHERE tenant_id = $1 AND key = $2',
};

/** As many connections as asked, or as the server has free (less a reserve): never fewer than 1. */
async function connectionsFor(url: string, wanted: number): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ free: number }>(
      `SELECT current_setting('max_connections')::int - count(*)::int AS free FROM pg_stat_activity`,
    );
    return Math.max(1, Math.min(wanted, (rows[0]?.free ?? 0) - CONNECTION_RESERVE));
  } finally {
    await client.end();
  }
}

export async function postgresRate(spec: {
  url: string;
  kind: BaselineKind;
  concurrency: number;
  count: number;
  limitMs: number;
  /** For reads: keys that exist in bench_ref_keys, with their tenant. */
  readKeys?: { tenantId: string; keys: string[] };
}): Promise<RateResult> {
  const connections = await connectionsFor(spec.url, spec.concurrency);
  const pool = new pg.Pool({ connectionString: spec.url, max: connections });
  pool.on('error', () => undefined);
  const params = (i: number): unknown[] => {
    if (spec.kind === 'commit') return [`v${i}`];
    const keys = spec.readKeys?.keys ?? [];
    return [spec.readKeys?.tenantId, keys[i % Math.max(1, keys.length)]];
  };
  const latenciesMs: number[] = [];
  let next = 0;
  try {
    // Open every connection first, so connecting is not measured.
    await Promise.all(Array.from({ length: connections }, () => pool.query('SELECT 1')));
    const started = performance.now();
    const deadline = started + spec.limitMs;
    const worker = async () => {
      while (next < spec.count && performance.now() < deadline) {
        const i = next++;
        const t0 = performance.now();
        await pool.query(SQL[spec.kind], params(i));
        latenciesMs.push(performance.now() - t0);
      }
    };
    await Promise.all(Array.from({ length: connections }, worker));
    const seconds = (performance.now() - started) / 1000;
    return { done: latenciesMs.length, seconds, latenciesMs, connections };
  } finally {
    await pool.end();
  }
}
