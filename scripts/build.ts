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
 * Without a directory argument (`npm run build`, and so `npm start`) it also builds the SDK
 * (scripts/build-client.ts) into packages/client/dist/ (ESM and CommonJS), where the package's
 * exports point, and each of the two is skipped when its output was built from the inputs it has
 * now (scripts/build-inputs.ts; docs/decisions/0044-npm-start-builds-only-what-changed.md).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BuildFailedError } from './build-failed-error.ts';
import { buildClientPackage, CLIENT_OUT_DIR } from './build-client.ts';
import { buildUnlessUpToDate, inputsDigest, recordInputs } from './build-inputs.ts';
import { buildExplorerBundle } from './explorer/build-explorer-bundle.ts';

const PROJECT = resolve(import.meta.dirname, '..');
export const DEFAULT_OUT_DIR = join(PROJECT, 'dist');

/** Files read at run time through `new URL(file, import.meta.url)`, beside their modules. */
const RUNTIME_FILES = [
  { from: 'schema', keep: (file: string) => file.endsWith('.graphql') },
  { from: 'migrations', keep: (file: string) => file.endsWith('.sql') },
];

export { BuildFailedError };

/** Beside tsc's sources: what else the gateway's build reads, and the build itself. */
const GATEWAY_EXTRA_INPUTS = [
  ...RUNTIME_FILES.map(({ from }) => from),
  // The explorer bundle's entry (inside gateway/, which tsc's include walks too) and builder.
  'gateway/explorer/browser',
  'scripts/explorer',
  // The bench's servers (in the include) import their neighbours, which tsc compiles too.
  'scripts/bench',
  'scripts/build.ts',
  'scripts/build-inputs.ts',
  'scripts/build-failed-error.ts',
  'tsconfig.json',
  'tsconfig.build.json',
  'package.json',
  // The dependencies as installed: tsc's types, esbuild's and GraphiQL's code.
  'package-lock.json',
];

/**
 * The SDK's inputs: the whole package (sources, both tsconfigs, package.json; its dist/ is never
 * an input), the root tsconfig it extends, the lock, its build script.
 */
const SDK_INPUTS = [
  'packages/client',
  'tsconfig.json',
  'package-lock.json',
  'scripts/build-client.ts',
  'scripts/build-failed-error.ts',
];

/**
 * The gateway's inputs: tsconfig.build.json's include (what tsc compiles) and
 * GATEWAY_EXTRA_INPUTS. The file is read as JSON with its whole-line comments dropped, not with
 * tsc's parser, whose load alone takes longer than the whole skipped build; a comment or comma
 * JSON refuses fails here, loudly (and test/unit/build-inputs.test.ts compares with tsc's reading).
 */
export function gatewayInputs(project: string = PROJECT): string[] {
  const file = join(project, 'tsconfig.build.json');
  const json = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => !line.trim().startsWith('//'))
    .join('\n');
  let include: unknown;
  try {
    include = (JSON.parse(json) as { include?: unknown }).include;
  } catch (error) {
    throw new BuildFailedError(`cannot read ${file} as JSON with whole-line comments`, {
      cause: error,
    });
  }
  if (!Array.isArray(include) || !include.every((entry) => typeof entry === 'string'))
    throw new BuildFailedError(`${file} has no include list of paths`);
  return [...include, ...GATEWAY_EXTRA_INPUTS];
}

/**
 * `npm run build`: the gateway's dist/ and the SDK's packages/client/dist/, each only when its
 * inputs changed since it was built. Says which it built and which it skipped.
 */
export function buildChanged(log: (line: string) => void): void {
  const gateway = buildUnlessUpToDate({
    outDir: DEFAULT_OUT_DIR,
    digest: inputsDigest(PROJECT, gatewayInputs()),
    build: (digest) => buildJavaScript(DEFAULT_OUT_DIR, { inputsDigest: digest }),
  });
  const sdk = buildUnlessUpToDate({
    outDir: CLIENT_OUT_DIR,
    digest: inputsDigest(PROJECT, SDK_INPUTS),
    build: (digest) => {
      buildClientPackage();
      // After its rename: a crash before this line leaves a whole build without a digest, which
      // the next build replaces; never a digest beside half a build.
      recordInputs(CLIENT_OUT_DIR, digest);
    },
  });
  for (const [name, outcome] of [
    ['dist/', gateway],
    ['packages/client/dist/', sdk],
  ] as const) {
    log(outcome === 'built' ? `build: ${name} built` : `build skipped: ${name} is up to date`);
  }
}

/**
 * Emits the project's JavaScript into `outDir` (replacing it) and copies its runtime files.
 * `inputsDigest`, when given, is recorded in the output before it is renamed into place.
 */
export function buildJavaScript(
  outDir: string = DEFAULT_OUT_DIR,
  options: { inputsDigest?: string } = {},
): void {
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
  if (options.inputsDigest !== undefined) recordInputs(staging, options.inputsDigest);
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
    // `npm run build` (no directory): the gateway's dist/ and the SDK's packages/client/dist/,
    // each unless up to date. With a directory (the bench's builds): the gateway's processes
    // only, always built.
    if (process.argv[2] === undefined) {
      buildChanged((line) => console.log(line));
    } else {
      buildJavaScript(resolve(process.argv[2]));
    }
  } catch (error) {
    console.error(error instanceof BuildFailedError ? error.message : error);
    process.exitCode = 1;
  }
}
