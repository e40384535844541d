/**
 * PostgreSQL's own ceiling on the bench's database, from `pgbench` itself: a one-row INSERT
 * committed per transaction, and one indexed read of a reference key by primary key, from N
 * connections each running one statement at a time. They bound what any design can reach: a
 * new payment needs two commits, a replay one read. Debian ships pgbench with
 * postgresql-client; without it the bench fails before it starts anything.
 */
import { execFile, execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';
import { withClient } from '../../dev/embedded-postgres/database-server.ts';

const execFileAsync = promisify(execFile);

/** Connections kept free for everyone else on a shared server (other suites, superuser). */
const CONNECTION_RESERVE = 10;
/** Past --time, pgbench only waits for its last transactions: a hang, not a slow run. */
const OVERRUN_MS = 30_000;

export interface PgbenchResult {
  /** Transactions per second, connection set-up excluded (pgbench's own tps line). */
  tps: number;
  latencyMs: number;
  connections: number;
}

/** Fails early, with what to install, where pgbench is missing. */
export function checkPgbench(): void {
  try {
    execFileSync('pgbench', ['--version'], { stdio: 'ignore' });
  } catch (error) {
    throw new Error('pgbench not found: apt-get install postgresql-client', { cause: error });
  }
}

const quoted = (text: string) => `'${text.replaceAll("'", "''")}'`;

function script(kind: 'commit' | 'read', keys: { tenantId: string; prefix: string; n: number }) {
  if (kind === 'commit') return `INSERT INTO bench_commits (v) VALUES ('pgbench');\n`;
  return `\\set i random(0, ${keys.n - 1})
SELECT response::text FROM bench_ref_keys WHERE tenant_id = ${quoted(keys.tenantId)} AND key = ${quoted(keys.prefix)} || :i;\n`;
}

/** As many connections as asked, or as the server has free (less a reserve): never fewer than 1. */
async function connectionsFor(url: string, wanted: number): Promise<number> {
  const { rows } = await withClient(url, (client) =>
    client.query<{ free: number }>(
      `SELECT current_setting('max_connections')::int - count(*)::int AS free FROM pg_stat_activity`,
    ),
  );
  return Math.max(1, Math.min(wanted, (rows[0]?.free ?? 0) - CONNECTION_RESERVE));
}

/** pgbench's summary: `tps = 1234.5 (without initial connection time)` and its kin. */
export function parsePgbench(output: string): Omit<PgbenchResult, 'connections'> {
  const tps = Number(/^tps = ([\d.]+) \(without initial connection/m.exec(output)?.[1] ?? NaN);
  if (!Number.isFinite(tps)) throw new Error(`no tps line in pgbench's output:\n${output}`);
  return { tps, latencyMs: Number(/^latency average = ([\d.]+) ms/m.exec(output)?.[1] ?? NaN) };
}

export async function pgbenchRate(spec: {
  url: string;
  kind: 'commit' | 'read';
  concurrency: number;
  seconds: number;
  /** For reads: the reference's warm-up keys, `${prefix}${i}` for i in [0, n). */
  readKeys: { tenantId: string; prefix: string; n: number };
}): Promise<PgbenchResult> {
  const connections = await connectionsFor(spec.url, spec.concurrency);
  const jobs = Math.min(availableParallelism(), connections);
  const args = ['--no-vacuum', '--protocol=prepared', '--file=-', `--client=${connections}`];
  const run = execFileAsync(
    'pgbench',
    [...args, `--jobs=${jobs}`, `--time=${spec.seconds}`, spec.url],
    {
      timeout: spec.seconds * 1000 + OVERRUN_MS,
      killSignal: 'SIGKILL',
    },
  );
  run.child.stdin?.end(script(spec.kind, spec.readKeys));
  return { ...parsePgbench((await run).stdout), connections };
}
