/**
 * A KeyStore on disk (`@payments-gateway/client/file-key-store`, Node only): one small JSON file
 * per operation id in a directory, so a process that restarts mid-retry resumes its calls with
 * the keys they started with.
 *
 * Failure modes, and why they do not bite:
 * - A crash mid-write: each file is written whole to a temporary name, flushed to disk, then
 *   renamed over the old one; rename is atomic, so a reader finds the old key or the new one,
 *   never half of either. A leftover temporary file is never read.
 * - Power loss after the rename: the file is fsynced before it, and the directory after, so a
 *   saved key is on disk before the request that carries it leaves.
 * - Operation ids with path characters, or longer than a file name may be: the file is named
 *   by a hash of the id; the id is kept inside for a human reading the directory.
 * - Two processes sharing a directory: each id is its own file, so they never overwrite each
 *   other's keys; two processes running the same operation id at once is the caller's mistake.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { KeyStore } from './key-store.ts';

interface StoredKey {
  operationId: string;
  key: string;
}

export function createFileKeyStore(options: { directory: string }): KeyStore {
  const { directory } = options;
  const fileOf = (operationId: string) =>
    join(directory, `${createHash('sha256').update(operationId).digest('hex')}.json`);
  return {
    async get(operationId) {
      let text: string;
      try {
        text = await readFile(fileOf(operationId), 'utf8');
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
      const stored = JSON.parse(text) as Partial<StoredKey>;
      // A hash collision or a hand-edited file: not this operation's key.
      if (stored.operationId !== operationId || typeof stored.key !== 'string') return undefined;
      return stored.key;
    },
    async set(operationId, key) {
      await mkdir(directory, { recursive: true });
      const file = fileOf(operationId);
      const temporary = `${file}.${randomUUID()}.tmp`;
      const handle = await open(temporary, 'w');
      try {
        await handle.writeFile(JSON.stringify({ operationId, key } satisfies StoredKey));
        await handle.sync();
      } finally {
        await handle.close();
      }
      try {
        await rename(temporary, file);
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
      await syncDirectory(directory);
    },
    async delete(operationId) {
      await rm(fileOf(operationId), { force: true });
    },
  };
}

function isMissing(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ENOENT';
}

/** Makes a rename durable. Some platforms (Windows) cannot open a directory: skipped there. */
async function syncDirectory(directory: string): Promise<void> {
  let handle;
  try {
    handle = await open(directory, 'r');
  } catch {
    return;
  }
  try {
    await handle.sync();
  } catch {
    // Not supported on this file system; the rename itself is still atomic.
  } finally {
    await handle.close();
  }
}
