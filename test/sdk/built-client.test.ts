/**
 * What `npm run build` emits for @payments-gateway/client (scripts/build-client.ts), run by
 * plain node as a merchant's code would run it: every file the package's exports name exists,
 * the modules load without tsx (no import left pointing at a .ts file), and they import nothing
 * but graphql and the platform.
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

/** Every file the package's exports map names, with dist/ read as this build's directory. */
function exportedFiles(): string[] {
  const manifest = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as {
    exports: Record<string, string | Record<string, string>>;
    types: string;
  };
  const targets = [manifest.types];
  for (const entry of Object.values(manifest.exports)) {
    if (typeof entry === 'string') continue; // ./package.json
    for (const [condition, target] of Object.entries(entry)) {
      if (condition !== '@payments-gateway/source') targets.push(target);
    }
  }
  return targets.map((target) => join(outDir, target.replace(/^\.\/dist\//, '')));
}

describe('the built SDK', () => {
  it('has every file its exports name', () => {
    const files = exportedFiles();
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const file of files) expect(existsSync(file), file).toBe(true);
  });

  it('imports nothing but graphql, its own modules and node: built-ins', () => {
    const specifiers = new Set<string>();
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.js')) {
          for (const match of readFileSync(path, 'utf8').matchAll(/\bfrom '([^']+)'/g)) {
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

  it('loads and works under plain node', async () => {
    const script = `
      const sdk = await import(${JSON.stringify(join(outDir, 'index.js'))});
      const files = await import(${JSON.stringify(join(outDir, 'file-key-store.js'))});
      const client = sdk.createPaymentsClient({ url: 'http://127.0.0.1:9/graphql', apiKey: 'k',
        maxAttempts: 1, fetch: () => Promise.reject(new TypeError('fetch failed')) });
      const error = await client.balances().catch((e) => e);
      const store = sdk.createMemoryKeyStore();
      await store.set('a', 'b');
      console.log(JSON.stringify({
        name: error.name, isError: error instanceof sdk.PaymentsApiError, code: error.code,
        stored: await store.get('a'), fileStore: typeof files.createFileKeyStore,
        document: sdk.CreatePaymentDocument.kind,
      }));`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--input-type=module', '-e', script],
      // Plain node: nothing inherited may load tsx.
      { cwd: PACKAGE, env: { ...process.env, NODE_OPTIONS: '' } },
    );
    expect(JSON.parse(stdout)).toEqual({
      name: 'PaymentsApiError',
      isError: true,
      code: 'NETWORK_ERROR',
      stored: 'b',
      fileStore: 'function',
      document: 'Document',
    });
  });
});
