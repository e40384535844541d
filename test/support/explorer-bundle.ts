import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildExplorerBundle } from '../../scripts/explorer/build-explorer-bundle.ts';

/** Bundling GraphiQL and React takes a second or two on an idle machine; far more on a busy one. */
export const EXPLORER_BUILD_TIMEOUT_MS = 60_000;

export interface BuiltExplorer {
  /** Pass as the app's explorerBundleDir. */
  dir: string;
  remove(): void;
}

/**
 * The explorer bundle, built from the working tree into a directory of the test's own: the
 * gateway under test runs from source, where there is no dist/explorer, and a dist/ left by an
 * earlier `npm run build` could be stale.
 */
export function buildExplorerForTest(): BuiltExplorer {
  const parent = mkdtempSync(join(tmpdir(), 'pgw-explorer-'));
  const dir = join(parent, 'explorer');
  buildExplorerBundle(dir);
  return { dir, remove: () => rmSync(parent, { recursive: true, force: true }) };
}
