/**
 * What `npm run build` emits for @payments-gateway/client (scripts/build-client.ts), run by
 * plain node as a merchant's code would run it: every file the package's exports name exists,
 * the ESM and CommonJS modules load without tsx (no import left pointing at a .ts file), and
 * they import nothing but graphql and the platform. test/sdk/packed-package.test.ts installs
 * the packed tarball itself.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClientPackage } from '../../scripts/build-client.ts';

const PACKAGE = resolve(import.meta.dirname, '..', '..', 'packages', 'client');
// Inside the package, as dist/ is: the emitted modules find graphql by walking up.
const outDir = join(PACKAGE, `.build-test-${process.pid}`);

beforeAll(() => {
  buildClientPackage(outDir);
}, 60_000);
afterAll(() => {
  rmSync(outDir, { recursive: true, force: true });
});

type Conditions = string | { [condition: string]: Conditions };

/** Every file the package's exports map names, with dist/ read as this build's directory. */
function exportedFiles(): string[] {
  const manifest = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as {
    exports: Record<string, Conditions>;
    main: string;
    module: string;
    types: string;
    typesVersions: Record<string, Record<string, string[]>>;
  };
  const targets = [manifest.main, manifest.module, manifest.types];
  for (const paths of Object.values(manifest.typesVersions['*'] ?? {})) targets.push(...paths);
  const walk = (entry: Conditions) => {
    if (typeof entry === 'string') targets.push(entry);
    else {
      for (const [condition, target] of Object.entries(entry)) {
        if (condition !== '@payments-gateway/source') walk(target);
      }
    }
  };
  for (const [subpath, entry] of Object.entries(manifest.exports)) {
    if (subpath !== './package.json') walk(entry);
  }
  return targets.map((target) => join(outDir, target.replace(/^\.\/dist\//, '')));
}

describe('the built SDK', () => {
  it('has every file its exports name', () => {
    const files = exportedFiles();
    expect(files.length).toBeGreaterThanOrEqual(17);
    for (const file of files) expect(existsSync(file), file).toBe(true);
  });

  it('imports nothing but graphql, its own modules and node: built-ins', () => {
    const specifiers = new Set<string>();
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.js') || entry.name.endsWith('.d.ts')) {
          const text = readFileSync(path, 'utf8');
          for (const match of text.matchAll(/\b(?:from |require\()['"]([^'"]+)['"]/g)) {
            specifiers.add(match[1]!);
          }
        }
      }
    };
    walk(outDir);
    for (const specifier of specifiers) {
      expect(
        specifier === 'graphql' ||
          specifier.startsWith('node:') ||
          (specifier.startsWith('./') && specifier.endsWith('.js')),
        specifier,
      ).toBe(true);
    }
  });

  it('says which module type each build is', () => {
    expect(JSON.parse(readFileSync(join(outDir, 'esm', 'package.json'), 'utf8'))).toEqual({
      type: 'module',
    });
    expect(JSON.parse(readFileSync(join(outDir, 'cjs', 'package.json'), 'utf8'))).toEqual({
      type: 'commonjs',
    });
  });

  it.each(['esm', 'cjs'])('loads and works under plain node (%s)', async (format) => {
    const load = format === 'esm' ? 'await import' : 'require';
    const script = `
      const sdk = ${load}(${JSON.stringify(join(outDir, format, 'index.js'))});
      const files = ${load}(${JSON.stringify(join(outDir, format, 'file-key-store.js'))});
      const hooks = ${load}(${JSON.stringify(join(outDir, format, 'webhooks.js'))});
      const client = sdk.createPaymentsClient({ url: 'http://127.0.0.1:9/graphql', apiKey: 'k',
        maxAttempts: 1, fetch: () => Promise.reject(new TypeError('fetch failed')) });
      const error = await client.balances().catch((e) => e);
      const store = sdk.createMemoryKeyStore();
      await store.set('a', 'b');
      console.log(JSON.stringify({
        name: error.name, isError: error instanceof sdk.PaymentsApiError, code: error.code,
        stored: await store.get('a'), fileStore: typeof files.createFileKeyStore,
        verify: typeof hooks.verifyWebhook, document: sdk.CreatePaymentDocument.kind,
      }));`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      // CommonJS has no top-level await: the script runs in an async function there.
      format === 'esm'
        ? ['--input-type=module', '-e', script]
        : ['--input-type=commonjs', '-e', `(async () => {${script}})()`],
      // Plain node: nothing inherited may load tsx.
      { cwd: PACKAGE, env: { ...process.env, NODE_OPTIONS: '' } },
    );
    expect(JSON.parse(stdout)).toEqual({
      name: 'PaymentsApiError',
      isError: true,
      code: 'NETWORK_ERROR',
      stored: 'b',
      fileStore: 'function',
      verify: 'function',
      document: 'Document',
    });
  });
});
