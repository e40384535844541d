/**
 * What a data directory's `postmaster.pid` says about the server on it: whether one runs, its
 * port, whether anyone still owns it. Postgres writes the file at start-up and removes it on a
 * clean shutdown, so after a SIGKILL of the gateway (the postmaster survives it) or of the
 * postmaster itself (the file stays), it is the one record of what happened.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Fast shutdown (what stop() asks for) ends sessions and exits in well under a second. */
const POSTMASTER_STOP_TIMEOUT_MS = 30_000;
/** How often to look whether a stopped postmaster is gone; shutdown takes ~100 ms. */
const POSTMASTER_EXIT_POLL_MS = 50;
/** postmaster.pid's lines: pid, data directory, start time, port, … (PostgreSQL's pidfile.h). */
const PID_FILE_PORT_LINE = 3;
/** The init process: an orphaned process is re-parented to it (or to a subreaper). */
const INIT_PID = 1;

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

async function pidFileLines(dataDir: string): Promise<string[]> {
  const contents = await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => '');
  return contents.split('\n');
}

function positiveInteger(text: string | undefined): number | undefined {
  const value = Number.parseInt(text ?? '', 10);
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

/** The pid in `postmaster.pid`, present from postgres start-up until a clean shutdown. */
export async function readPostmasterPid(dataDir: string): Promise<number | undefined> {
  return positiveInteger((await pidFileLines(dataDir))[0]);
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

/** The parent of `pid` per /proc; undefined without /proc. */
async function parentPid(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after the last ')'.
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  return positiveInteger(fields?.[1]);
}

export interface RunningPostmaster {
  pid: number;
  port: number;
  /**
   * Nobody will stop it: the gateway responsible for it was killed (SIGKILL, a crash) without
   * stopping it. Otherwise that gateway, still alive, stops it when it exits.
   */
  orphaned: boolean;
}

/**
 * The postmaster running on `dataDir`, if any. `owner`: the pid recorded as responsible for
 * it, when known. Without it, a postmaster re-parented to init (its starter is gone) is orphaned.
 */
export async function runningPostmaster(
  dataDir: string,
  owner: number | undefined,
): Promise<RunningPostmaster | undefined> {
  const lines = await pidFileLines(dataDir);
  const pid = positiveInteger(lines[0]);
  const port = positiveInteger(lines[PID_FILE_PORT_LINE]);
  if (pid === undefined || port === undefined || !(await isPostmasterOf(pid, dataDir))) {
    return undefined;
  }
  if (owner !== undefined) return { pid, port, orphaned: !isAlive(owner) };
  const parent = await parentPid(pid);
  return { pid, port, orphaned: parent === undefined || parent === INIT_PID || !isAlive(parent) };
}

/**
 * A server killed with SIGKILL (or a container stopped) leaves `postmaster.pid` behind. Postgres
 * skips it only when that pid is dead or another user's; after a container restart the pid is
 * often reused by a process of the `postgres` user (e.g. a system cluster's backend), and then
 * postgres refuses to start ("lock file already exists"). So we remove the file unless its pid
 * is a postmaster of this very data dir.
 */
export async function removeStalePostmasterPid(dataDir: string): Promise<void> {
  const pid = await readPostmasterPid(dataDir);
  if (pid === undefined) return;
  if (await isPostmasterOf(pid, dataDir)) {
    throw new Error(`postgres (pid ${pid}) is already running on ${dataDir}`);
  }
  await rm(join(dataDir, 'postmaster.pid'), { force: true });
}

async function untilExited(pid: number): Promise<void> {
  const deadline = Date.now() + POSTMASTER_STOP_TIMEOUT_MS;
  while (isAlive(pid)) {
    if (Date.now() > deadline) {
      throw new Error(
        `postgres (pid ${pid}) still running ${POSTMASTER_STOP_TIMEOUT_MS} ms after stop`,
      );
    }
    await sleep(POSTMASTER_EXIT_POLL_MS);
  }
}

/** Asks the postmaster serving `dataDir` for a fast shutdown and waits until it is gone. */
export async function stopPostmaster(dataDir: string): Promise<void> {
  const pid = await readPostmasterPid(dataDir);
  if (pid === undefined || !(await isPostmasterOf(pid, dataDir))) return;
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return; // exited meanwhile
  }
  await untilExited(pid);
}
