import { describe, expect, it } from 'vitest';
import {
  CssDataUrlError,
  contentHash,
  extractCssDataUrls,
} from '../../scripts/explorer/css-data-urls.ts';

/**
 * graphiql's stylesheet embeds fonts and images as data: URLs, which the explorer's CSP ('self'
 * only) blocks: the build moves each into a file of the bundle and names it instead.
 */
describe('moving data: URLs out of the explorer stylesheet', () => {
  const font = Buffer.from('wOF2 not really a font');
  const png = Buffer.from('not really a png');

  it('replaces each with a file named by its content, quoted or not', () => {
    const css =
      `@font-face{src:url(data:font/woff2;base64,${font.toString('base64')}) format("woff2")}` +
      `.a{background:url("data:image/png;base64,${png.toString('base64')}")}` +
      `.b{background:url('data:image/svg+xml,%3Csvg%2F%3E')}`;
    const { css: rewritten, assets } = extractCssDataUrls(css);
    expect(rewritten).not.toContain('data:');
    const byName = new Map(assets.map((asset) => [asset.name, asset.content.toString()]));
    expect(byName).toEqual(
      new Map([
        [`asset-${contentHash(font)}.woff2`, font.toString()],
        [`asset-${contentHash(png)}.png`, png.toString()],
        [`asset-${contentHash('<svg/>')}.svg`, '<svg/>'],
      ]),
    );
    for (const name of byName.keys()) expect(rewritten).toContain(`url(${name})`);
  });

  it('writes one file for a data: URL used twice', () => {
    const url = `url(data:image/png;base64,${png.toString('base64')})`;
    expect(extractCssDataUrls(`.a{background:${url}}.b{background:${url}}`).assets).toHaveLength(1);
  });

  it.each([
    ['a type the gateway does not serve', '.a{background:url(data:text/html;base64,PGI+)}'],
    ['a form it cannot move', '.a{background:image-set("data:image/png;base64,AAAA" 1x)}'],
  ])('fails the build on %s rather than ship what the CSP blocks', (_what, css) => {
    expect(() => extractCssDataUrls(css)).toThrow(CssDataUrlError);
  });
});
