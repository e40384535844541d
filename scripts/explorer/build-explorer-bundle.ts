/**
 * The explorer bundle (docs/decisions/0022-explorer-bundled-graphiql.md): GraphiQL, React and the
 * entry module in gateway/explorer/browser, bundled by esbuild into one module script and one
 * stylesheet, their fonts and images as files of their own, and the HTML page that loads them.
 * Every file but the page is named by its content, so the gateway can let browsers cache it for
 * good; the manifest, written last, lists each file with its SHA-256.
 *
 * `npm run build` writes it to dist/explorer (scripts/build.ts); tests write it to a directory
 * of their own. `npx tsx scripts/explorer/build-explorer-bundle.ts` builds one into a temporary
 * directory and prints each file's size, raw and gzipped (the ADR's figure).
 */
import { buildSync, type OutputFile } from 'esbuild';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import {
  EXPLORER_MANIFEST_FILE,
  type ExplorerManifest,
} from '../../gateway/explorer/explorer-manifest.ts';
import { contentHash, extractCssDataUrls } from './css-data-urls.ts';
import { explorerPage } from './explorer-page.ts';

const PROJECT = resolve(import.meta.dirname, '..', '..');
const BROWSER = join(PROJECT, 'gateway', 'explorer', 'browser');
const PAGE = 'index.html';

export class ExplorerBuildFailedError extends Error {
  override readonly name = 'ExplorerBuildFailedError';
}

/** What was written: each file and its size in bytes, the page first. */
export type ExplorerBundleSizes = Array<{ name: string; bytes: number }>;

/**
 * Bundles the explorer into `outDir`, which must not exist yet: the files of an earlier bundle
 * left beside a new manifest would be served by no one and mislead whoever reads the directory.
 */
export function buildExplorerBundle(outDir: string): ExplorerBundleSizes {
  if (existsSync(outDir)) throw new ExplorerBuildFailedError(`${outDir} exists already`);
  const { script, stylesheet } = bundle();
  const { css, assets } = extractCssDataUrls(stylesheet);
  const files = new Map<string, Buffer | string>();
  for (const asset of assets) files.set(asset.name, asset.content);
  const icon = readFileSync(join(import.meta.dirname, 'explorer-icon.svg'));
  const names = {
    script: `explorer-${contentHash(script)}.js`,
    stylesheet: `explorer-${contentHash(css)}.css`,
    icon: `icon-${contentHash(icon)}.svg`,
  };
  files.set(names.script, script);
  files.set(names.stylesheet, css);
  files.set(names.icon, icon);
  files.set(PAGE, explorerPage(names));

  mkdirSync(outDir, { recursive: true });
  const manifest: ExplorerManifest = { page: PAGE, files: {} };
  for (const [name, content] of files) {
    writeFileSync(join(outDir, name), content);
    manifest.files[name] = createHash('sha256').update(content).digest('hex');
  }
  // Last: its presence says every file above is whole (gateway/explorer/explorer-manifest.ts).
  writeFileSync(join(outDir, EXPLORER_MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  return [PAGE, ...[...files.keys()].filter((name) => name !== PAGE).sort()].map((name) => ({
    name,
    bytes: Buffer.byteLength(files.get(name)!),
  }));
}

/** The entry module and everything it imports, as one script and one stylesheet, in memory. */
function bundle(): { script: string; stylesheet: string } {
  let outputFiles: OutputFile[];
  try {
    ({ outputFiles } = buildSync({
      entryPoints: [join(BROWSER, 'explorer.tsx')],
      tsconfig: join(BROWSER, 'tsconfig.json'),
      bundle: true,
      write: false,
      outdir: join(PROJECT, '.explorer-bundle-unwritten'),
      entryNames: 'explorer',
      format: 'esm',
      platform: 'browser',
      target: 'es2020',
      minify: true,
      jsx: 'automatic',
      // The schema the gateway serves, compiled in: its depth limit refuses introspection.
      loader: { '.graphql': 'text' },
      // React's production build: the development one is several times larger and slower.
      define: { 'process.env.NODE_ENV': '"production"' },
      logLevel: 'silent',
    }));
  } catch (error) {
    throw new ExplorerBuildFailedError('esbuild could not bundle the explorer', { cause: error });
  }
  const only = (extension: string) => {
    const found = outputFiles.filter((file) => extname(file.path) === extension);
    if (found.length !== 1 || found[0] === undefined)
      throw new ExplorerBuildFailedError(`esbuild wrote ${found.length} ${extension} files, not 1`);
    return found[0].text;
  };
  return { script: only('.js'), stylesheet: only('.css') };
}

/** The size report: every file, raw and as gzip would send it, and the totals. */
function printSizes(dir: string, sizes: ExplorerBundleSizes): void {
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`.padStart(10);
  let raw = 0;
  let gzipped = 0;
  for (const { name, bytes } of sizes) {
    const zipped = gzipSync(readFileSync(join(dir, name))).length;
    raw += bytes;
    gzipped += zipped;
    console.log(`${name.padEnd(32)}${kb(bytes)}${kb(zipped)} gzipped`);
  }
  console.log(`${`${sizes.length} files`.padEnd(32)}${kb(raw)}${kb(gzipped)} gzipped`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dir = mkdtempSync(join(tmpdir(), 'explorer-bundle-'));
  try {
    const out = join(dir, 'explorer');
    printSizes(out, buildExplorerBundle(out));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
