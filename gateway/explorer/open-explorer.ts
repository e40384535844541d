import { loadExplorerBundle } from './explorer-bundle.ts';
import { createExplorer, type Explorer } from './explorer-responses.ts';

/** The explorer as one process serves it: off, ready, or why browsers get a 503. */
export type ExplorerStatus =
  { state: 'off' } | { state: 'ready' } | { state: 'unavailable'; reason: string };

/**
 * EXPLORER at start. On, it serves the bundle in `bundleDir` (dist/explorer under `npm start`);
 * with none given (the gateway composed from source, as tests do) or a bundle that fails its
 * checks, browsers get a 503 that names the fix, and the API is served as ever.
 */
export async function openExplorer(opts: {
  enabled: boolean;
  bundleDir: string | undefined;
}): Promise<{ explorer: Explorer | null; status: ExplorerStatus }> {
  if (!opts.enabled) return { explorer: null, status: { state: 'off' } };
  const bundle =
    opts.bundleDir === undefined
      ? { ready: false as const, reason: 'explorer bundle: none given (running from source)' }
      : await loadExplorerBundle(opts.bundleDir);
  return {
    explorer: createExplorer(bundle),
    status: bundle.ready ? { state: 'ready' } : { state: 'unavailable', reason: bundle.reason },
  };
}
