import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../http/respond.ts';
import type { ExplorerBundle, ExplorerFile } from './explorer-bundle.ts';

/** Where the page's script, stylesheet, fonts and images are served; see explorer-page.ts. */
export const EXPLORER_ASSET_PREFIX = '/explorer/';

/**
 * The page's Content-Security-Policy: everything from this origin, nothing from any other, no
 * inline script or style, no eval, no plugins, no framing (clickjacking a page that holds an API
 * key), no <base> to redirect the relative asset paths, no form posting the key elsewhere.
 * GraphiQL's data: fonts and images are moved into files at build for this
 * (scripts/explorer/css-data-urls.ts).
 */
export const EXPLORER_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Asset names carry their content's hash: a new build is a new URL, so browsers keep these. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

const NOT_BUILT =
  'explorer not built: run npm run build (npm start does), then start the gateway from dist/. ' +
  'The API is unaffected: POST /graphql.\n';

/** Headers every explorer answer carries: its own type only, and no referrer to other sites. */
const COMMON_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

export interface Explorer {
  /** GET /graphql from a browser (explorer-request.ts). */
  servePage(req: IncomingMessage, res: ServerResponse): void;
  /** Anything under EXPLORER_ASSET_PREFIX; `name` is what follows it. */
  serveAsset(name: string, req: IncomingMessage, res: ServerResponse): void;
}

/** The explorer's answers over a loaded bundle, or 503s naming the fix when there is none. */
export function createExplorer(bundle: ExplorerBundle): Explorer {
  return {
    servePage(req, res) {
      if (!bundle.ready) return sendNotBuilt(res, { vary: 'Accept' });
      sendFile(req, res, {
        file: bundle.page,
        headers: {
          // /graphql answers JSON to API clients: a cache must key this page by Accept.
          vary: 'Accept',
          // Revalidated every time (a 304 when unchanged), so a new build's assets are picked up.
          'cache-control': 'no-cache',
          'content-security-policy': EXPLORER_CSP,
        },
      });
    },
    serveAsset(name, req, res) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        return sendJson(res, {
          status: 405,
          body: { error: 'method not allowed' },
          headers: { allow: 'GET, HEAD' },
        });
      }
      if (!bundle.ready) return sendNotBuilt(res, {});
      const file = bundle.assets.get(name);
      if (file === undefined) return sendJson(res, { status: 404, body: { error: 'not found' } });
      sendFile(req, res, {
        file,
        headers: { 'cache-control': IMMUTABLE, 'content-security-policy': EXPLORER_CSP },
      });
    },
  };
}

function sendFile(
  req: IncomingMessage,
  res: ServerResponse,
  answer: { file: ExplorerFile; headers: Record<string, string> },
): void {
  const headers = { ...COMMON_HEADERS, ...answer.headers, etag: answer.file.etag };
  if (matchesEtag(req.headers['if-none-match'], answer.file.etag)) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  res.writeHead(200, {
    ...headers,
    'content-type': answer.file.contentType,
    'content-length': answer.file.body.length,
  });
  // Node writes no body for HEAD on its own; the headers are GET's, as HTTP requires.
  res.end(answer.file.body);
}

/** If-None-Match uses the weak comparison (RFC 9110 §13.1.2): W/ is ignored. */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === etag || tag === '*');
}

function sendNotBuilt(res: ServerResponse, headers: Record<string, string>): void {
  res.writeHead(503, {
    ...COMMON_HEADERS,
    ...headers,
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(NOT_BUILT),
    'cache-control': 'no-store',
  });
  res.end(NOT_BUILT);
}
