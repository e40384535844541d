/**
 * The SDK's generated types and documents (packages/client/src/generated/) are committed: this
 * regenerates them from today's schema and operations into a temporary directory, with the
 * codegen CLI and the package's own settings, and fails when they differ — so a schema or
 * operations change cannot ship without `npm run codegen`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import config, { OUTPUT, OUTPUT_CONFIG } from '../../packages/client/codegen.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');

describe("the SDK's generated code", () => {
  it('is what `npm run codegen` makes from the schema and operations today', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'pgw-codegen-'));
    try {
      const fresh = join(directory, 'graphql.ts');
      const freshConfig = join(directory, 'codegen.json');
      await writeFile(
        freshConfig,
        JSON.stringify({ ...config, generates: { [fresh]: OUTPUT_CONFIG } }),
      );
      // The CLI in its own process, as `npm run codegen` runs it (its loaders are CommonJS).
      const cli = join(ROOT, 'node_modules', '.bin', 'graphql-codegen');
      await promisify(execFile)(process.execPath, [cli, '--config', freshConfig], { cwd: ROOT });
      const committed = await readFile(join(ROOT, OUTPUT), 'utf8');
      expect(
        (await readFile(fresh, 'utf8')) === committed,
        `${OUTPUT} is stale: run npm run codegen and commit it`,
      ).toBe(true);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  }, 60_000);
});
