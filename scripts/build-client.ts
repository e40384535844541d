/**
 * The SDK's build (`packages/client`, @payments-gateway/client): run by `npm run build` after
 * the gateway's, and by the package's `prepack` (`npm pack`, `npm publish`), so a tarball always
 * holds what its exports name (docs/decisions/0042-the-sdk-as-an-npm-package.md).
 *
 * Two tsc runs over the same sources: ESM into dist/esm/ (the package's tsconfig.json) and
 * CommonJS into dist/cjs/ (tsconfig.cjs.json), each with its declarations. Each directory gets a
 * package.json naming its module type, so Node and TypeScript read dist/cjs/*.js and *.d.ts as
 * CommonJS although the package says "type": "module". Emitted beside `dist/` and renamed into
 * place, so code importing the package meanwhile finds the old build or the new one, never half
 * of either. A type error fails the build, as it does for the gateway.
 *
 *   npx tsx scripts/build-client.ts            # into packages/client/dist
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BuildFailedError } from './build-failed-error.ts';

const PACKAGE = resolve(import.meta.dirname, '..', 'packages', 'client');
export const CLIENT_OUT_DIR = join(PACKAGE, 'dist');

/** The two builds: the directory under dist/, the tsconfig, the module type Node reads. */
const FORMATS = [
  { directory: 'esm', tsconfig: 'tsconfig.json', type: 'module' },
  { directory: 'cjs', tsconfig: 'tsconfig.cjs.json', type: 'commonjs' },
] as const;

/** Emits the SDK's ESM and CommonJS builds with declarations into `outDir` (default its dist/). */
export function buildClientPackage(outDir: string = CLIENT_OUT_DIR): void {
  const staging = `${outDir}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    for (const format of FORMATS) {
      const target = join(staging, format.directory);
      const compiled = spawnSync(
        process.execPath,
        [tsc, '-p', join(PACKAGE, format.tsconfig), '--outDir', target],
        { cwd: PACKAGE, encoding: 'utf8' },
      );
      if (compiled.status !== 0) {
        throw new BuildFailedError(
          `tsc (packages/client, ${format.directory}) failed (${compiled.status}):\n` +
            `${compiled.stdout}${compiled.stderr}`,
        );
      }
      rewriteDeclarationImports(target);
      mkdirSync(target, { recursive: true });
      writeFileSync(join(target, 'package.json'), `${JSON.stringify({ type: format.type })}\n`);
    }
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  const previous = `${outDir}.old-${process.pid}`;
  if (existsSync(outDir)) renameSync(outDir, previous);
  renameSync(staging, outDir);
  rmSync(previous, { recursive: true, force: true });
}

/**
 * tsc rewrites `./x.ts` to `./x.js` in the JavaScript it emits (rewriteRelativeImportExtensions)
 * but leaves the declarations' specifiers as written. TypeScript 5 reads those; older compilers
 * and declaration tools refuse a `.ts` specifier. Same length, so the declaration maps hold.
 */
function rewriteDeclarationImports(directory: string): void {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const file = join(directory, entry.name);
    if (entry.isDirectory()) rewriteDeclarationImports(file);
    if (!entry.isFile() || !entry.name.endsWith('.d.ts')) continue;
    const text = readFileSync(file, 'utf8');
    const rewritten = text.replace(
      /(\bfrom\s+|\bimport\s*\(\s*)(['"])(\.{1,2}\/[^'"]*?)\.ts\2/g,
      '$1$2$3.js$2',
    );
    if (rewritten !== text) writeFileSync(file, rewritten);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    buildClientPackage(process.argv[2] === undefined ? undefined : resolve(process.argv[2]));
  } catch (error) {
    console.error(error instanceof BuildFailedError ? error.message : error);
    process.exitCode = 1;
  }
}
