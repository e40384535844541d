import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPLORER_CSP } from '../../gateway/explorer/explorer-responses.ts';
import { buildExplorerForTest, type BuiltExplorer } from '../support/explorer-bundle.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { startTestStack, TENANT_A, type TestStack } from '../support/test-stack.ts';

/**
 * EXPLORER over HTTP (docs/api.md §1.3): the page and its files, their headers, and the API's
 * answers left exactly as they were. The page in a browser: explorer-browser.test.ts.
 */
const database = useTestDatabase('explorer_http');
let bundle: BuiltExplorer;
/** EXPLORER on, with a bundle. */
let served: TestStack;
/** EXPLORER=false: the gateway as it was before the explorer. */
let off: TestStack;
/** EXPLORER on, composed from source with no bundle (as tests and `tsx app/main.ts` run). */
let unbuilt: TestStack;

beforeAll(async () => {
  bundle = buildExplorerForTest();
  served = await startTestStack({
    databaseUrl: database.url,
    app: { explorer: true, explorerBundleDir: bundle.dir },
  });
  off = await startTestStack({ databaseUrl: database.url, app: { explorer: false } });
  unbuilt = await startTestStack({ databaseUrl: database.url, app: { explorer: true } });
});
afterAll(async () => {
  await served?.stop();
  await off?.stop();
  await unbuilt?.stop();
  bundle?.remove();
});

/** What Chromium sends on a navigation. */
const BROWSER_ACCEPT =
  'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

interface Answer {
  status: number;
  headers: Headers;
  body: Buffer;
}

async function request(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  return {
    status: response.status,
    headers: response.headers,
    body: Buffer.from(await response.arrayBuffer()),
  };
}

/** The files the page names: its script, stylesheet and icon. */
function referencedFiles(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="explorer\/([^"]+)"/g)].map((m) => m[1] ?? '');
}

const sha256 = (body: Buffer) => createHash('sha256').update(body).digest('hex');

describe('the explorer page', () => {
  it('is served to a browser without a key, under a CSP of this origin only', async () => {
    const page = await request(`${served.app.url}/graphql`, {
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(EXPLORER_CSP);
    const directives = EXPLORER_CSP.split('; ');
    for (const directive of directives)
      expect(directive, directive).toMatch(/^[a-z-]+ '(self|none)'$/);
    for (const needed of ['default-src', 'script-src', 'style-src', 'connect-src'])
      expect(directives).toContain(`${needed} 'self'`);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    // /graphql answers JSON to API clients: a shared cache must not hand them this page.
    expect(page.headers.get('vary')).toBe('Accept');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(page.headers.get('etag')).toBe(`"${sha256(page.body)}"`);
    const html = page.body.toString();
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)/); // no inline script
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/); // no inline style or handler
    expect(html).not.toMatch(/https?:\/\//); // nothing from another origin
    expect(referencedFiles(html)).toHaveLength(3);
  });

  it('names files by their content and lets browsers keep them', async () => {
    const page = await request(`${served.app.url}/graphql`, { headers: { accept: 'text/html' } });
    const names = referencedFiles(page.body.toString());
    const stylesheet = names.find((name) => name.endsWith('.css'));
    // The stylesheet's fonts and images: files of the bundle too, as 'self' allows no data: URL.
    const fromCss = [
      ...(await request(`${served.app.url}/explorer/${stylesheet}`)).body
        .toString()
        .matchAll(/url\(([^)]+)\)/g),
    ].map((m) => m[1] ?? '');
    expect(fromCss.length).toBeGreaterThan(0);
    const types: Record<string, string> = {
      js: 'text/javascript; charset=utf-8',
      css: 'text/css; charset=utf-8',
      svg: 'image/svg+xml',
      woff2: 'font/woff2',
      woff: 'font/woff',
      png: 'image/png',
    };
    for (const name of [...names, ...new Set(fromCss)]) {
      const file = await request(`${served.app.url}/explorer/${name}`);
      expect(file.status, name).toBe(200);
      expect(file.headers.get('content-type'), name).toBe(types[name.split('.').pop() ?? '']);
      expect(file.headers.get('cache-control'), name).toBe('public, max-age=31536000, immutable');
      expect(file.headers.get('x-content-type-options'), name).toBe('nosniff');
      const hash = /-([0-9a-f]{16})\./.exec(name)?.[1];
      expect(sha256(file.body).slice(0, 16), name).toBe(hash);
      expect(file.headers.get('etag'), name).toBe(`"${sha256(file.body)}"`);
    }
  });

  it('answers a revalidation with 304 and no body', async () => {
    const page = await request(`${served.app.url}/graphql`, { headers: { accept: 'text/html' } });
    const etag = page.headers.get('etag') ?? '';
    const again = await request(`${served.app.url}/graphql`, {
      headers: { accept: 'text/html', 'if-none-match': etag },
    });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    const script = referencedFiles(page.body.toString()).find((name) => name.endsWith('.js'));
    const scriptEtag = (await request(`${served.app.url}/explorer/${script}`)).headers.get('etag');
    const revalidated = await request(`${served.app.url}/explorer/${script}`, {
      headers: { 'if-none-match': `W/${scriptEtag}` },
    });
    expect(revalidated.status).toBe(304);
  });

  it('answers 404 for a file the bundle does not hold, and 405 for anything but GET and HEAD', async () => {
    for (const path of ['/explorer/nope.js', '/explorer/', '/explorer/%2e%2e%2fmanifest.json']) {
      const answer = await request(`${served.app.url}${path}`);
      expect({ path, status: answer.status }).toEqual({ path, status: 404 });
    }
    const page = await request(`${served.app.url}/graphql`, { headers: { accept: 'text/html' } });
    const script = referencedFiles(page.body.toString()).find((name) => name.endsWith('.js'));
    const head = await request(`${served.app.url}/explorer/${script}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    const post = await request(`${served.app.url}/explorer/${script}`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('the API beside the explorer', () => {
  const balances = encodeURIComponent('{ balances { currency available } }');
  /** Requests that are not a browser asking for the page: each must get today's answer. */
  const apiRequests: Array<
    [string, string, { method?: string; headers?: Record<string, string>; body?: string }]
  > = [
    ['GET, no Accept', '/graphql', {}],
    ['GET, Accept JSON', '/graphql', { headers: { accept: 'application/json' } }],
    ['GET, Accept */*', '/graphql', { headers: { accept: '*/*' } }],
    [
      'GET, JSON and HTML alike',
      '/graphql',
      { headers: { accept: 'application/json, text/html' } },
    ],
    [
      'GET with a key and a query',
      `/graphql?query=${balances}`,
      { headers: { authorization: `Bearer ${TENANT_A.apiKey}`, accept: 'application/json' } },
    ],
    [
      'POST from a browser-like client',
      '/graphql',
      {
        method: 'POST',
        headers: {
          accept: BROWSER_ACCEPT,
          'content-type': 'application/json',
          authorization: `Bearer ${TENANT_A.apiKey}`,
        },
        body: JSON.stringify({ query: '{ balances { currency available } }' }),
      },
    ],
    [
      'POST without a key',
      '/graphql',
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' },
    ],
  ];

  it.each(apiRequests)('%s: the same answer as with EXPLORER=false', async (_what, path, init) => {
    const withExplorer = await request(`${served.app.url}${path}`, init);
    const without = await request(`${off.app.url}${path}`, init);
    const view = (answer: Answer) => ({
      status: answer.status,
      type: answer.headers.get('content-type'),
      authenticate: answer.headers.get('www-authenticate'),
      vary: answer.headers.get('vary'),
      body: answer.body.toString(),
    });
    expect(view(withExplorer)).toEqual(view(without));
    expect(withExplorer.headers.get('content-type')).toMatch(/json/);
  });

  it('with EXPLORER=false, a browser gets the 401 of any keyless request, and no files', async () => {
    const page = await request(`${off.app.url}/graphql`, { headers: { accept: BROWSER_ACCEPT } });
    expect(page.status).toBe(401);
    expect(page.headers.get('www-authenticate')).toBe('Bearer');
    expect(JSON.parse(page.body.toString())).toEqual({
      errors: [{ message: 'Missing or unknown API key.', extensions: { code: 'UNAUTHENTICATED' } }],
    });
    const servedPage = await request(`${served.app.url}/graphql`, {
      headers: { accept: 'text/html' },
    });
    for (const name of referencedFiles(servedPage.body.toString()))
      expect((await request(`${off.app.url}/explorer/${name}`)).status, name).toBe(404);
  });

  it('with EXPLORER=false, a browser with a key gets no page from Apollo either', async () => {
    // Apollo's own landing page follows NODE_ENV (a Sandbox loaded from Apollo's servers outside
    // production): it is off, so no setting of NODE_ENV puts a page where EXPLORER said none.
    const page = await request(`${off.app.url}/graphql`, {
      headers: { accept: BROWSER_ACCEPT, authorization: `Bearer ${TENANT_A.apiKey}` },
    });
    expect(page.status).toBe(400);
    expect(page.headers.get('content-type')).toMatch(/json/);
    expect(page.body.toString()).not.toMatch(/<html/i);
  });

  it('without a bundle, a browser gets a 503 naming the fix, and the API serves on', async () => {
    const page = await request(`${unbuilt.app.url}/graphql`, {
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(page.status).toBe(503);
    expect(page.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(page.body.toString()).toContain('explorer not built: run npm run build');
    expect(unbuilt.app.explorer.state).toBe('unavailable');
    const api = await request(`${unbuilt.app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TENANT_A.apiKey}` },
      body: JSON.stringify({ query: '{ balances { currency } }' }),
    });
    expect(api.status).toBe(200);
  });
});
