/**
 * The embedded PostgreSQL of one checkout (`npm start` without DATABASE_URL): where its cluster
 * lives, which port it listens on, and whether a server is already running on it. What was
 * chosen is recorded in `<stateDir>/embedded-postgres.json`, so the next start finds it.
 *
 * Failure modes, and how each is handled:
 * - a second checkout, or anything else, holds the preferred port: another free port is taken
 *   and recorded (the recorded port is preferred next time, so it stays put while it is free);
 * - the port is taken between our probe and postgres' bind: the start is retried on another;
 * - a gateway was killed with its server running (SIGKILL spares the postmaster), or another
 *   gateway of this checkout runs: the running server is used, not a second one started on the
 *   same data directory (postgres would refuse it). An orphan, whose gateway is gone, is taken
 *   over and stopped on exit; another live gateway's server is left to that gateway;
 * - root runs a checkout the `postgres` user cannot enter (root's home): the cluster goes to a
 *   root-owned directory under the shared directory, named by a hash of the checkout's path,
 *   with a file naming that checkout beside it, and a warning names both places;
 * - such a checkout whose `.data/pg` holds a cluster (it was moved there from a directory the
 *   postgres user could enter): the start fails with the way out, rather than start on an
 *   empty cluster elsewhere while the data sits unused (ADR 0046).
 */
import { createHash } from 'node:crypto';
import { access, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { z } from 'zod';
import {
  attachEmbeddedServer,
  EMBEDDED_SHARED_DIR,
  EmbeddedPostgresUnusableError,
  findFreePort,
  isPortFree,
  startEmbeddedServer,
  type DatabaseServer,
} from './database-server.ts';
import { runningPostmaster } from './postmaster-pid.ts';
import {
  canExecute,
  ensureRootOwnedDir,
  MOVE_OR_CONFIGURE,
  postgresRunAs,
  type RunAs,
} from './postgres-user.ts';

const RECORD_FILE = 'embedded-postgres.json';
/** A running server in crash recovery (after a power cut) answers within this, or is stuck. */
const ATTACH_TIMEOUT_MS = 60_000;
/**
 * Starts that lose their port between probe and bind, or lose the race to start this checkout's
 * server to another gateway, before giving up: each loss needs another process acting in the
 * same milliseconds, so a third in a row means something else is wrong.
 */
const START_ATTEMPTS = 3;
/** Of the checkout path's SHA-256, naming its cluster's directory: no collision among a machine's checkouts. */
const CHECKOUT_HASH_HEX_CHARS = 16;

const recordSchema = z.object({
  /** The state directory it was written for: a copied checkout must not share the cluster. */
  checkout: z.string(),
  dataDir: z.string(),
  port: z.number().int().positive(),
  /** The gateway that stops the server when it exits. */
  owner: z.number().int().positive().optional(),
});
type EmbeddedRecord = z.infer<typeof recordSchema>;

export interface CheckoutServer {
  server: DatabaseServer;
  dataDir: string;
  port: number;
  /** Already running (another gateway's, or left by a killed one), not started by us. */
  reused: boolean;
}

async function readRecord(stateDir: string): Promise<EmbeddedRecord | undefined> {
  const text = await readFile(join(stateDir, RECORD_FILE), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const record = recordSchema.parse(JSON.parse(text));
    return record.checkout === stateDir ? record : undefined;
  } catch {
    return undefined; // unreadable: chosen afresh and rewritten
  }
}

/** Written beside and renamed into place: a concurrent start reads the old record or the new. */
async function writeRecord(stateDir: string, record: EmbeddedRecord): Promise<void> {
  const file = join(stateDir, RECORD_FILE);
  const staging = `${file}.tmp-${process.pid}`;
  await writeFile(staging, `${JSON.stringify(record, null, 2)}\n`);
  await rename(staging, file);
}

/**
 * `<stateDir>/pg`, unless the server's user cannot enter `stateDir`: then the checkout's own
 * directory under `sharedDir`, said in a warning naming both. Never while `<stateDir>/pg` holds a
 * cluster: starting elsewhere would start an empty database beside the one the checkout has.
 */
export async function chooseDataDir(
  stateDir: string,
  sharedDir: string,
  warn: (line: string) => void,
): Promise<string> {
  const runAs = await postgresRunAs();
  const intended = join(stateDir, 'pg');
  if (await canExecute(runAs, stateDir)) return intended;
  const barrier = await firstUnsearchable(runAs, stateDir);
  if (await exists(join(intended, 'PG_VERSION'))) {
    throw new EmbeddedPostgresUnusableError(
      `${intended} holds this checkout's database, but PostgreSQL runs as the postgres user, ` +
        `who cannot enter ${barrier}, and starting elsewhere would start an empty one: let it ` +
        `in (chmod o+x ${barrier}), move the checkout to a directory every user may search ` +
        '(e.g. /srv or /opt), or set DATABASE_URL',
    );
  }
  const hash = createHash('sha256').update(stateDir).digest('hex');
  const home = join(sharedDir, hash.slice(0, CHECKOUT_HASH_HEX_CHARS));
  await ensureRootOwnedDir(sharedDir);
  await ensureRootOwnedDir(home);
  await writeFile(join(home, 'checkout'), `${stateDir}\n`);
  warn(
    `WARNING: the postgres user cannot enter ${barrier}, so this checkout's database is in ` +
      `${join(home, 'pg')}, not ${intended} (recorded in ${join(stateDir, RECORD_FILE)}); ` +
      `to keep it inside the checkout, ${MOVE_OR_CONFIGURE}`,
  );
  return join(home, 'pg');
}

/** The outermost directory on the way to `path` that `runAs` may not search, or `path`. */
async function firstUnsearchable(runAs: RunAs | undefined, path: string): Promise<string> {
  const parts = path.split(sep).filter(Boolean);
  for (let depth = 1; depth <= parts.length; depth++) {
    const dir = sep + parts.slice(0, depth).join(sep);
    if (!(await canExecute(runAs, dir))) return dir;
  }
  return path;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/**
 * The checkout's server: the one already running on its cluster, else one started on the
 * recorded port, the preferred one, or any free one, in that order of preference.
 */
export async function openCheckoutServer(opts: {
  /** The checkout's `.data/`. */
  stateDir: string;
  preferredPort: number;
  sharedDir?: string;
  /** Where a warning about the cluster's place goes (the start's stderr). */
  warn?: (line: string) => void;
}): Promise<CheckoutServer> {
  const stateDir = resolve(opts.stateDir);
  const sharedDir = opts.sharedDir ?? EMBEDDED_SHARED_DIR;
  await mkdir(stateDir, { recursive: true });
  const recorded = await readRecord(stateDir);
  const dataDir =
    recorded?.dataDir ?? (await chooseDataDir(stateDir, sharedDir, opts.warn ?? (() => undefined)));
  const record = (port: number, owner: number | undefined): Promise<void> =>
    writeRecord(stateDir, { checkout: stateDir, dataDir, port, owner });

  for (let attempt = 1; ; attempt += 1) {
    const running = await runningPostmaster(dataDir, recorded?.owner);
    if (running !== undefined) {
      const server = await attachEmbeddedServer({
        dataDir,
        port: running.port,
        owned: running.orphaned,
        timeoutMs: ATTACH_TIMEOUT_MS,
      });
      await record(running.port, running.orphaned ? process.pid : recorded?.owner);
      return { server, dataDir, port: running.port, reused: true };
    }
    const wanted = recorded?.port ?? opts.preferredPort;
    const port = attempt === 1 && (await isPortFree(wanted)) ? wanted : await findFreePort();
    try {
      const server = await startEmbeddedServer({ dataDir, port, persistent: true, sharedDir });
      await record(port, process.pid);
      return { server, dataDir, port, reused: false };
    } catch (error) {
      if (error instanceof EmbeddedPostgresUnusableError || attempt === START_ATTEMPTS) throw error;
      // Lost a race (see above) when the port is taken now or a server runs on the cluster.
      const lostRace =
        !(await isPortFree(port)) || (await runningPostmaster(dataDir, undefined)) !== undefined;
      if (!lostRace) throw error;
    }
  }
}
