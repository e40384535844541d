import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadExplorerBundle } from './explorer-bundle.ts';
import { EXPLORER_MANIFEST_FILE } from './explorer-manifest.ts';

/**
 * The checks that keep a partial or altered bundle from being served, on bundles written by
 * hand: what esbuild makes is covered by test/integration/explorer-http.test.ts.
 */
let outside: string;
/** The bundle's directory, inside one of the test's own, so a name may try to reach outside. */
let dir: string;
beforeEach(() => {
  outside = mkdtempSync(join(tmpdir(), 'explorer-bundle-test-'));
  dir = join(outside, 'bundle');
  mkdirSync(dir);
});
afterEach(() => {
  rmSync(outside, { recursive: true, force: true });
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function writeBundle(files: Record<string, string>, manifest?: unknown): void {
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  const listed = Object.fromEntries(Object.entries(files).map(([n, c]) => [n, sha256(c)]));
  writeFileSync(
    join(dir, EXPLORER_MANIFEST_FILE),
    JSON.stringify(manifest ?? { page: 'index.html', files: listed }),
  );
}

/** Why the bundle in `dir` is refused; fails the test when it is served instead. */
async function refusal(): Promise<string> {
  const bundle = await loadExplorerBundle(dir);
  if (bundle.ready) throw new Error('the bundle was loaded, not refused');
  return bundle.reason;
}

const PAGE = '<!doctype html><script type="module" src="explorer/explorer-1.js"></script>';

describe('loading the explorer bundle', () => {
  it('serves the page and every listed file, typed by extension', async () => {
    writeBundle({ 'index.html': PAGE, 'explorer-1.js': 'export {}', 'asset-1.woff2': 'wOF2' });
    const bundle = await loadExplorerBundle(dir);
    if (!bundle.ready) throw new Error(bundle.reason);
    expect(bundle.page.body.toString()).toBe(PAGE);
    expect(bundle.page.etag).toBe(`"${sha256(PAGE)}"`);
    expect([...bundle.assets.keys()].sort()).toEqual(['asset-1.woff2', 'explorer-1.js']);
    expect(bundle.assets.get('explorer-1.js')?.contentType).toBe('text/javascript; charset=utf-8');
    expect(bundle.assets.get('asset-1.woff2')?.contentType).toBe('font/woff2');
  });

  it('is not built when the manifest is missing (a build that stopped half way)', async () => {
    writeFileSync(join(dir, 'index.html'), PAGE);
    expect(await refusal()).toContain('not built');
  });

  it('refuses a file cut short or changed since the build', async () => {
    writeBundle({ 'index.html': PAGE, 'explorer-1.js': 'export {}' });
    writeFileSync(join(dir, 'explorer-1.js'), 'export');
    expect(await refusal()).toContain('explorer-1.js does not match the manifest');
  });

  it('refuses a listed file that is missing', async () => {
    writeBundle({ 'index.html': PAGE });
    writeFileSync(
      join(dir, EXPLORER_MANIFEST_FILE),
      JSON.stringify({
        page: 'index.html',
        files: { 'index.html': sha256(PAGE), 'x.js': sha256('') },
      }),
    );
    expect(await refusal()).toContain('x.js is listed but not readable');
  });

  it('refuses a name that reaches outside the bundle', async () => {
    // A whole, well-hashed page one directory up: only the name rule keeps it out.
    writeFileSync(join(outside, 'index.html'), PAGE);
    writeBundle({}, { page: '../index.html', files: { '../index.html': sha256(PAGE) } });
    expect(await refusal()).toContain('is not a plain file name');
  });

  it('refuses a file of a type it does not serve', async () => {
    writeBundle({ 'index.html': PAGE, 'run.sh': 'echo' });
    expect(await refusal()).toContain('run.sh is of a type the gateway does not serve');
  });

  it('refuses a manifest whose page is not among its files', async () => {
    writeBundle(
      { 'index.html': PAGE },
      { page: 'other.html', files: { 'index.html': sha256(PAGE) } },
    );
    expect(await refusal()).toContain('the page other.html is not among the files');
  });
});
