/**
 * `npm run build`: the JavaScript that `npm start` runs (`node dist/app/main.js`), and the bench
 * with it. tsc emits every process this project starts (tsconfig.build.json) under the output
 * directory, and the files they read beside their modules at run time (the GraphQL schema, the
 * SQL migrations) are copied to the same relative paths. The explorer's browser bundle goes to
 * `explorer/` in it (scripts/explorer/build-explorer-bundle.ts), where app/main.ts looks.
 *
 * Why not tsx at run time, as the tests do: tsx compiles with esbuild's `keepNames`, which wraps
 * each named closure (`const f = () => …`, `{ work: async () => … }`) in a `__name` call that
 * redefines its `name` every time the closure is made, and it turns source maps on: a cost
 * spread over every layer (see docs/decisions/0011-compiled-javascript-for-npm-start.md). A
 * type error fails the build, and so `npm start`, rather than start code that does not check.
 * Source maps are written beside the JavaScript; stack traces name dist/ files unless node runs
 * with --enable-source-maps, which makes building them dear.
 *
 * The output directory must be a directory of its own at the project's root (`dist`, or
 * `.build-…` for tests): Node finds the packages the emitted modules import by walking up from
 * them to node_modules, and the directory is replaced whole. It is emitted beside, then renamed
 * into place, so a process starting from it meanwhile (a second `npm start`, the bench) finds
 * the old build or the new one, never half of either (or, for the instant between the two
 * renames, none: it fails to start, and is started again).
 *
 * Without a directory argument it also builds the SDK (scripts/build-client.ts) into
 * packages/client/dist/ (ESM and CommonJS), where the package's exports point.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BuildFailedError } from './build-failed-error.ts';
import { buildClientPackage } from './build-client.ts';
import { buildExplorerBundle } from './explorer/build-explorer-bundle.ts';

const PROJECT = resolve(import.meta.dirname, '..');
export const DEFAULT_OUT_DIR = join(PROJECT, 'dist');

/** Files read at run time through `new URL(file, import.meta.url)`, beside their modules. */
const RUNTIME_FILES = [
  { from: 'schema', keep: (file: string) => file.endsWith('.graphql') },
  { from: 'migrations', keep: (file: string) => file.endsWith('.sql') },
];

export { BuildFailedError };

/** Emits the project's JavaScript into `outDir` (replacing it) and copies its runtime files. */
export function buildJavaScript(outDir: string = DEFAULT_OUT_DIR): void {
  const name = relative(PROJECT, outDir);
  if (name !== 'dist' && !/^\.build-[\w-]+$/.test(name)) {
    throw new BuildFailedError(
      `refusing to replace ${outDir}: not dist/ or .build-… at ${PROJECT}`,
    );
  }
  const staging = `${outDir}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const compiled = spawnSync(
    process.execPath,
    [tsc, '-p', join(PROJECT, 'tsconfig.build.json'), '--outDir', staging],
    { cwd: PROJECT, encoding: 'utf8' },
  );
  if (compiled.status !== 0) {
    rmSync(staging, { recursive: true, force: true });
    throw new BuildFailedError(
      `tsc failed (${compiled.status}):\n${compiled.stdout}${compiled.stderr}`,
    );
  }
  for (const { from, keep } of RUNTIME_FILES) {
    for (const file of readdirSync(join(PROJECT, from)).filter(keep)) {
      cpSync(join(PROJECT, from, file), join(staging, from, file));
    }
  }
  // In the staging directory too: the explorer appears with the build that serves it, or the
  // build fails and the previous one stays whole.
  try {
    buildExplorerBundle(join(staging, 'explorer'));
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw new BuildFailedError(`the explorer bundle failed: ${causes(error)}`, { cause: error });
  }
  const previous = `${outDir}.old-${process.pid}`;
  if (existsSync(outDir)) renameSync(outDir, previous);
  renameSync(staging, outDir);
  rmSync(previous, { recursive: true, force: true });
}

/** An error's message and its causes', on one line: esbuild's reasons are in the cause. */
function causes(error: unknown): string {
  const reasons: string[] = [];
  for (let e: unknown = error; e instanceof Error; e = e.cause) reasons.push(e.message);
  return reasons.join(': ');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    // `npm run build` (no directory): the gateway's dist/ and the SDK's packages/client/dist/.
    // With a directory (the bench's builds): the gateway's processes only.
    if (process.argv[2] === undefined) {
      buildJavaScript();
      buildClientPackage();
    } else {
      buildJavaScript(resolve(process.argv[2]));
    }
  } catch (error) {
    console.error(error instanceof BuildFailedError ? error.message : error);
    process.exitCode = 1;
  }
}
