/**
 * Another commit of this repository, checked out beside it for a before/after measurement
 * (bench:ab): a detached git worktree under /tmp that shares this checkout's
 * node_modules through a link, removed afterwards whatever happened.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFile, symlink, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** This checkout's root. */
export const REPO = fileURLToPath(new URL('../..', import.meta.url));

export async function git(args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('git', args, { cwd: REPO, maxBuffer: 256 * 1024 * 1024 });
  return stdout.trim();
}

/** Runs `work` with `commit` checked out in a worktree of its own, then removes the worktree. */
export async function withWorktree<T>(
  commit: string,
  work: (dir: string) => Promise<T>,
  onCleanupFailure: (message: string) => void,
): Promise<T> {
  const dir = `/tmp/pgw-before-${randomBytes(4).toString('hex')}`;
  await git(['worktree', 'add', '--detach', dir, commit]);
  try {
    await symlink(join(REPO, 'node_modules'), join(dir, 'node_modules'), 'dir');
    return await work(dir);
  } finally {
    await removeWorktree(dir, onCleanupFailure);
  }
}

/**
 * A `git worktree remove` that fails leaves the directory and a registration in .git/worktrees;
 * say how to clean up rather than hide it. The node_modules link goes first so nothing can
 * follow it into the real node_modules.
 */
async function removeWorktree(dir: string, onFailure: (message: string) => void): Promise<void> {
  await unlink(join(dir, 'node_modules')).catch(() => undefined);
  await git(['worktree', 'remove', '--force', dir]).catch((error: unknown) => {
    onFailure(
      `could not remove ${dir} (${String(error)}); run: git worktree remove --force ${dir}`,
    );
  });
}

/**
 * The working tree's state as a short hash of its diff against HEAD and of its untracked files:
 * someone else may be editing it while we measure, and two "after" runs of different code
 * should not be averaged silently.
 */
export async function workingTreeFingerprint(): Promise<string> {
  const hash = createHash('sha256');
  hash.update(await git(['diff', 'HEAD', '--binary']));
  const untracked = await git(['ls-files', '--others', '--exclude-standard', '-z']);
  for (const path of untracked.split('\0').filter(Boolean).sort()) {
    hash.update(path);
    hash.update(await readFile(join(REPO, path)).catch(() => Buffer.from('(unreadable)')));
  }
  return hash.digest('hex').slice(0, 12);
}
