import { createHash } from 'node:crypto';

/** A file a data: URL held, now a file of the bundle that the stylesheet names instead. */
export interface ExtractedAsset {
  name: string;
  content: Buffer;
}

/** The extensions of the media types graphiql's stylesheet embeds; another one fails the build. */
const EXTENSIONS: Readonly<Record<string, string>> = {
  'font/woff2': 'woff2',
  'font/woff': 'woff',
  'image/png': 'png',
  'image/svg+xml': 'svg',
  'image/gif': 'gif',
};

const DATA_URL = /url\(\s*(['"]?)data:([^;,'")]+)((?:;[^;,'")]+)*),([^'")]*)\1\s*\)/g;

export class CssDataUrlError extends Error {
  override readonly name = 'CssDataUrlError';
}

/**
 * Moves every `url(data:…)` of a stylesheet into a file of its own, named by its content.
 * graphiql's stylesheet embeds its fonts and a few images as data: URLs, which a
 * Content-Security-Policy of 'self' blocks (font-src and img-src do not cover data:): the page
 * would render in fallback fonts with a console full of violations. As files they load from
 * 'self', and are cached on their own instead of inside every new stylesheet. A data: URL this
 * cannot move fails the build rather than reach the browser to be blocked.
 */
export function extractCssDataUrls(css: string): { css: string; assets: ExtractedAsset[] } {
  const assets = new Map<string, ExtractedAsset>();
  const rewritten = css.replace(DATA_URL, (...groups: string[]) => {
    const [, , mediaType = '', params = '', data = ''] = groups;
    const extension = EXTENSIONS[mediaType.trim().toLowerCase()];
    if (extension === undefined)
      throw new CssDataUrlError(`the stylesheet embeds a data: URL of type ${mediaType}`);
    const content = params.split(';').includes('base64')
      ? Buffer.from(data, 'base64')
      : Buffer.from(decodeURIComponent(data), 'utf8');
    const name = `asset-${contentHash(content)}.${extension}`;
    assets.set(name, { name, content });
    return `url(${name})`;
  });
  if (/data:/i.test(rewritten.replace(/\/\*[\s\S]*?\*\//g, '')))
    throw new CssDataUrlError('the stylesheet holds a data: URL in a form this cannot move');
  return { css: rewritten, assets: [...assets.values()] };
}

/** The part of a file's SHA-256 its name carries: enough that two builds' files never collide. */
export function contentHash(content: Buffer | string): string {
  return createHash('sha256').update(content).digest('hex').slice(0, 16);
}
