import { z } from 'zod';

/**
 * The explorer bundle's table of contents, written by `npm run build` beside the files it lists
 * (scripts/explorer/build-explorer-bundle.ts) and read by the gateway at start
 * (explorer-bundle.ts). It is written last: a build that stopped half way leaves no manifest, and
 * a file changed or cut short since fails its hash, so the gateway never serves part of a bundle.
 */
export const EXPLORER_MANIFEST_FILE = 'manifest.json';

/**
 * A file name the bundle may hold: one path segment, so no name in a manifest or a URL can
 * reach outside the bundle's directory.
 */
export const EXPLORER_FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9]+)+$/;

const fileName = z.string().regex(EXPLORER_FILE_NAME, 'is not a plain file name');

export const explorerManifestSchema = z.object({
  /** The HTML page served at GET /graphql; also listed in `files`. */
  page: fileName,
  /** Every file of the bundle, with the SHA-256 of its content (hex). */
  files: z.record(fileName, z.string().regex(/^[0-9a-f]{64}$/, 'is not a SHA-256')),
});

export type ExplorerManifest = z.infer<typeof explorerManifestSchema>;
