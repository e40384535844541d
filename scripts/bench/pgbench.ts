/**
 * PostgreSQL's own ceiling on the bench's database, from `pgbench` itself: a one-row INSERT
 * committed per transaction, and one indexed read of a reference key by primary key, from N
 * connections each running one statement at a time. They bound what any design can reach: a
 * new payment needs two commits, a replay one read. Debian ships pgbench with
 * postgresql-client; without it the bench fails before it starts anything.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const execFileAsync = promisify(execFile);

/** Connections kept free for everyone else on a shared server (other suites, superuser). */
const CONNECTION_RESERVE = 10;
/** pgbench's worker threads: one per core of the machine the bench was written for. */
const PGBENCH_THREADS = 2;
/** Past -T, pgbench only waits for its last transactions: a hang, not a slow run. */
const OVERRUN_MS = 30_000;

export interface PgbenchResult {
  /** Transactions per second, connection set-up excluded (pgbench's own tps line). */
  tps: number;
  latencyMs: number;
  transactions: number;
  connections: number;
}

export type BaselineKind = 'commit' | 'read';

/** Fails early, with what to install, where pgbench is missing. */
export function checkPgbench(): void {
  try {
    execFileSync('pgbench', ['--version'], { stdio: 'ignore' });
  } catch (error) {
    throw new Error('pgbench not found: apt-get install postgresql-client', { cause: error });
  }
}

const quoted = (text: string) => `'${text.replaceAll("'", "''")}'`;

function script(kind: BaselineKind, readKeys: { tenantId: string; prefix: string; n: number }) {
  if (kind === 'commit') return `INSERT INTO bench_commits (v) VALUES ('pgbench');\n`;
  return [
    `\\set i random(0, ${readKeys.n - 1})`,
    `SELECT response::text FROM bench_ref_keys WHERE tenant_id = ${quoted(readKeys.tenantId)} AND key = ${quoted(readKeys.prefix)} || :i;`,
    '',
  ].join('\n');
}

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

/** pgbench's summary: `tps = 1234.5 (without initial connection time)` and its kin. */
export function parsePgbench(output: string): Omit<PgbenchResult, 'connections'> {
  const number = (pattern: RegExp) => Number(pattern.exec(output)?.[1] ?? NaN);
  const tps = number(/^tps = ([\d.]+) \(without initial connection/m);
  if (!Number.isFinite(tps)) throw new Error(`no tps line in pgbench's output:\n${output}`);
  return {
    tps,
    latencyMs: number(/^latency average = ([\d.]+) ms/m),
    transactions: number(/^number of transactions actually processed: (\d+)/m),
  };
}

export async function pgbenchRate(spec: {
  url: string;
  kind: BaselineKind;
  concurrency: number;
  seconds: number;
  /** For reads: the reference's warm-up keys, `${prefix}${i}` for i in [0, n). */
  readKeys: { tenantId: string; prefix: string; n: number };
}): Promise<PgbenchResult> {
  const connections = await connectionsFor(spec.url, spec.concurrency);
  const dir = await mkdtemp(join(tmpdir(), 'pgw-pgbench-'));
  try {
    const file = join(dir, `${spec.kind}.sql`);
    await writeFile(file, script(spec.kind, spec.readKeys));
    const args = ['--no-vacuum', '--protocol=prepared', `--file=${file}`];
    args.push(`--client=${connections}`, `--jobs=${Math.min(PGBENCH_THREADS, connections)}`);
    args.push(`--time=${spec.seconds}`, spec.url);
    const { stdout } = await execFileAsync('pgbench', args, {
      timeout: spec.seconds * 1000 + OVERRUN_MS,
      killSignal: 'SIGKILL',
    });
    return { ...parsePgbench(stdout), connections };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
