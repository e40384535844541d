/**
 * What a build was made from, so `npm start` can skip a build whose inputs have not changed
 * (docs/decisions/0044-npm-start-builds-only-what-changed.md). A build writes the digest of its
 * inputs into its output directory as its last step before the output is in place; a later
 * build whose inputs have the same digest is skipped.
 *
 * Failure modes, and why each stays correct:
 * - a changed, added or removed input file changes the digest: rebuilt. By content, not mtime:
 *   a `git checkout` that puts back the same bytes rebuilds nothing, an edit that keeps the
 *   mtime (a restore, a copy with -p) still rebuilds;
 * - a failed or interrupted build writes no digest (it is written last, inside the output that
 *   appears whole or not at all), and the previous output's digest is of other inputs: rebuilt;
 * - the output directory removed: its digest goes with it: rebuilt;
 * - an input changed while a build runs: the digest is taken before the build, so the next
 *   start sees the change and builds again.
 * What is not an input (node_modules beyond package-lock.json, the Node version) does not
 * trigger a build: `rm -rf dist` does.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** Beside the output it describes: the digest of the inputs it was built from. */
export const INPUTS_STAMP_FILE = '.build-inputs';

/** Never inputs, wherever they sit: dependencies, outputs, and the tests tsc does not compile. */
const NOT_INPUTS = {
  dirs: new Set(['node_modules', 'dist', '.data', '.git']),
  suffixes: ['.test.ts'],
};

/** Every file under each root (a file or a directory, relative to `project`), sorted. */
function inputFiles(project: string, roots: readonly string[]): string[] {
  const files: string[] = [];
  const visit = (path: string): void => {
    if (!existsSync(path)) return;
    if (statSync(path).isDirectory()) {
      for (const entry of readdirSync(path, { withFileTypes: true })) {
        if (entry.isDirectory() && NOT_INPUTS.dirs.has(entry.name)) continue;
        // Staging and previous outputs of a build in progress (dist.tmp-…, dist.old-…).
        if (/^dist\.(tmp|old)-/.test(entry.name)) continue;
        visit(join(path, entry.name));
      }
      return;
    }
    if (!NOT_INPUTS.suffixes.some((suffix) => path.endsWith(suffix))) files.push(path);
  };
  for (const root of roots) visit(join(project, root));
  return [...new Set(files)].map((file) => relative(project, file).split(sep).join('/')).sort();
}

/**
 * SHA-256 over every input file's path and content. A root that does not exist counts as no
 * files (a root created later changes the digest).
 */
export function inputsDigest(project: string, roots: readonly string[]): string {
  const hash = createHash('sha256');
  for (const file of inputFiles(project, roots)) {
    const content = readFileSync(join(project, file));
    hash.update(`${file}\0${content.length}\0`).update(content);
  }
  return hash.digest('hex');
}

/** The digest `outDir` was built from, or undefined: no output, or none recorded. */
export function builtFrom(outDir: string): string | undefined {
  try {
    return readFileSync(join(outDir, INPUTS_STAMP_FILE), 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Records in `dir` the digest of the inputs it holds the build of. */
export function recordInputs(dir: string, digest: string): void {
  writeFileSync(join(dir, INPUTS_STAMP_FILE), `${digest}\n`);
}

/**
 * Runs `build` unless `outDir` was built from inputs with this digest. `build` must record the
 * digest (recordInputs) only once its output is complete.
 */
export function buildUnlessUpToDate(target: {
  outDir: string;
  digest: string;
  build: (digest: string) => void;
}): 'built' | 'up to date' {
  if (builtFrom(target.outDir) === target.digest) return 'up to date';
  target.build(target.digest);
  return 'built';
}
