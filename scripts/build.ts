/**
 * `npm run build`: the JavaScript that `npm start` runs (`node dist/src/main.js`), and the bench
 * with it. tsc emits every process this project starts (tsconfig.build.json) under the output
 * directory, and the files they read beside their modules at run time (the GraphQL schema, the
 * SQL migrations) are copied to the same relative paths.
 *
 * Why not tsx at run time, as the tests do: tsx compiles with esbuild's `keepNames`, which wraps
 * every function and class in a `__name` call that defines its `name` each time a closure is
 * made, and it turns source maps on. On the request path that is one more call per closure,
 * everywhere: `npm run bench` measured the gateway's CPU per new payment 7–12% lower compiled
 * (README, Benchmarks). A build that fails (a type error) fails `npm start` rather than start
 * code that does not check.
 *
 * The output directory must sit inside the project: Node finds the packages the emitted modules
 * import by walking up from them to node_modules.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const PROJECT = resolve(import.meta.dirname, '..');
export const DEFAULT_OUT_DIR = join(PROJECT, 'dist');

/** Files read at run time through `new URL(file, import.meta.url)`, beside their modules. */
const RUNTIME_FILES = [
  { from: 'schema', keep: (file: string) => file.endsWith('.graphql') },
  { from: 'migrations', keep: (file: string) => file.endsWith('.sql') },
];

export class BuildFailedError extends Error {
  override readonly name = 'BuildFailedError';
}

/** Emits the project's JavaScript into `outDir` (emptied first) and copies its runtime files. */
export function buildJavaScript(outDir: string = DEFAULT_OUT_DIR): void {
  rmSync(outDir, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const compiled = spawnSync(
    process.execPath,
    [tsc, '-p', join(PROJECT, 'tsconfig.build.json'), '--outDir', outDir],
    { cwd: PROJECT, encoding: 'utf8' },
  );
  if (compiled.status !== 0) {
    throw new BuildFailedError(
      `tsc failed (${compiled.status}):\n${compiled.stdout}${compiled.stderr}`,
    );
  }
  for (const { from, keep } of RUNTIME_FILES) {
    for (const file of readdirSync(join(PROJECT, from)).filter(keep)) {
      cpSync(join(PROJECT, from, file), join(outDir, from, file));
    }
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    buildJavaScript(process.argv[2] === undefined ? undefined : resolve(process.argv[2]));
  } catch (error) {
    console.error(error instanceof BuildFailedError ? error.message : error);
    process.exitCode = 1;
  }
}
