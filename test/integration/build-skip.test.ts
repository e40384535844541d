import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyWorkingTree } from '../support/fresh-clone.ts';

/**
 * `npm run build` (what `npm start` runs first) in a copy of the working tree: a build with
 * nothing changed is skipped and says so, leaving dist/ as it was; a changed source rebuilds the
 * gateway but not the SDK; a failed build leaves nothing that would skip the next one.
 */
const PROJECT = join(import.meta.dirname, '..', '..');
/** tsc over the whole project, the explorer bundle and the SDK, on a loaded machine. */
const BUILD_TIMEOUT_MS = 240_000;
let checkout = '';

/** `npm run build` in the copy, as npm runs it; its exit code and its output. */
function build(): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], {
    cwd: checkout,
    encoding: 'utf8',
    timeout: BUILD_TIMEOUT_MS,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** What would show a replaced output: the directory's inode and its main module's mtime. */
function outputIdentity(dir: string, file: string): { inode: number; mtimeMs: number } {
  return { inode: statSync(dir).ino, mtimeMs: statSync(join(dir, file)).mtimeMs };
}

const gatewayIdentity = () => outputIdentity(join(checkout, 'dist'), 'app/main.js');
const sdkIdentity = () => outputIdentity(join(checkout, 'packages/client/dist'), 'esm/index.js');

beforeAll(async () => {
  checkout = mkdtempSync(join(tmpdir(), 'pgw-build-skip-'));
  await copyWorkingTree(PROJECT, checkout);
  // The dependencies as they are here: nothing of them is built, only read.
  symlinkSync(join(PROJECT, 'node_modules'), join(checkout, 'node_modules'));
}, 120_000);
afterAll(() => {
  if (checkout !== '') rmSync(checkout, { recursive: true, force: true });
});

describe('npm run build builds only what changed', () => {
  it(
    'skips both outputs when nothing changed, and says so',
    () => {
      const first = build();
      expect(first.status, first.output).toBe(0);
      expect(first.output).toContain('build: dist/ built');
      expect(first.output).toContain('build: packages/client/dist/ built');
      const [gateway, sdk] = [gatewayIdentity(), sdkIdentity()];

      const again = build();
      expect(again.status, again.output).toBe(0);
      expect(again.output.trim().split('\n')).toEqual([
        'build skipped: dist/ is up to date',
        'build skipped: packages/client/dist/ is up to date',
      ]);
      expect(gatewayIdentity()).toEqual(gateway);
      expect(sdkIdentity()).toEqual(sdk);
    },
    3 * BUILD_TIMEOUT_MS,
  );

  it(
    'a changed source rebuilds dist/ with the change, and leaves the SDK alone',
    () => {
      const [gateway, sdk] = [gatewayIdentity(), sdkIdentity()];
      appendFileSync(join(checkout, 'lib/canonical-json.ts'), '\n// build-skip.test marker\n');
      const rebuilt = build();
      expect(rebuilt.status, rebuilt.output).toBe(0);
      expect(rebuilt.output).toContain('build: dist/ built');
      expect(rebuilt.output).toContain('build skipped: packages/client/dist/ is up to date');
      expect(gatewayIdentity().inode).not.toBe(gateway.inode);
      expect(readFileSync(join(checkout, 'dist/lib/canonical-json.js'), 'utf8')).toContain(
        'build-skip.test marker',
      );
      expect(sdkIdentity()).toEqual(sdk);
    },
    2 * BUILD_TIMEOUT_MS,
  );

  it(
    'a failed build keeps the previous dist/ and is tried again, never skipped',
    () => {
      const gateway = gatewayIdentity();
      appendFileSync(
        join(checkout, 'lib/canonical-json.ts'),
        '\nexport const broken: number = "x";\n',
      );
      for (let attempt = 1; attempt <= 2; attempt++) {
        const failed = build();
        expect(failed.status, failed.output).toBe(1);
        expect(failed.output).toContain('tsc failed');
        expect(failed.output).not.toContain('build skipped: dist/');
        expect(gatewayIdentity()).toEqual(gateway);
      }
    },
    3 * BUILD_TIMEOUT_MS,
  );
});
