import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { z } from 'zod';
import {
  EXPLORER_MANIFEST_FILE,
  explorerManifestSchema,
  type ExplorerManifest,
} from './explorer-manifest.ts';

/** One file of the bundle as the gateway serves it: held in memory, with its validator. */
export interface ExplorerFile {
  body: Buffer;
  contentType: string;
  /** A strong ETag from the content's SHA-256, so a revalidation costs a 304 and no body. */
  etag: string;
}

/**
 * The explorer as loaded at start: the page and the files it loads, or why there is none. Held
 * in memory, so a rebuild of dist/ under a running gateway (a second `npm start`) never serves a
 * page of one build with the files of another: each process serves the bundle it started with.
 */
export type ExplorerBundle =
  | { ready: true; page: ExplorerFile; assets: ReadonlyMap<string, ExplorerFile> }
  | { ready: false; reason: string };

/** What the gateway serves, by extension; a bundle holding anything else is refused whole. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.gif': 'image/gif',
};

/**
 * Reads the bundle `npm run build` wrote to `dir` and checks every file against the manifest.
 * Never throws: a missing or damaged bundle is a reason, which the gateway logs at start and
 * answers with 503 to browsers, while GraphQL itself serves on.
 */
export async function loadExplorerBundle(dir: string): Promise<ExplorerBundle> {
  let manifest: ExplorerManifest;
  try {
    const text = await readFile(join(dir, EXPLORER_MANIFEST_FILE), 'utf8');
    manifest = explorerManifestSchema.parse(JSON.parse(text));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      return notReady(`not built (no ${join(dir, EXPLORER_MANIFEST_FILE)})`);
    return notReady(`${EXPLORER_MANIFEST_FILE} in ${dir} is not readable`, error);
  }
  const files = new Map<string, ExplorerFile>();
  for (const [name, sha256] of Object.entries(manifest.files)) {
    const contentType = CONTENT_TYPES[extname(name)];
    if (contentType === undefined)
      return notReady(`${name} is of a type the gateway does not serve`);
    let body: Buffer;
    try {
      body = await readFile(join(dir, name));
    } catch (error) {
      return notReady(`${name} is listed but not readable`, error);
    }
    // A file cut short (a copy interrupted) or replaced since the build: never served.
    if (createHash('sha256').update(body).digest('hex') !== sha256)
      return notReady(`${name} does not match the manifest`);
    files.set(name, { body, contentType, etag: `"${sha256}"` });
  }
  const page = files.get(manifest.page);
  if (page === undefined) return notReady(`the page ${manifest.page} is not among the files`);
  files.delete(manifest.page);
  return { ready: true, page, assets: files };
}

/** One line for the start log: zod's issues by path, rather than its JSON. */
function notReady(reason: string, cause?: unknown): ExplorerBundle {
  const detail =
    cause instanceof z.ZodError
      ? `: ${cause.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`).join('; ')}`
      : cause instanceof Error
        ? `: ${cause.message}`
        : '';
  return { ready: false, reason: `explorer bundle: ${reason}${detail}` };
}
