import { describe, expect, it } from 'vitest';
import { asksForExplorerPage } from './explorer-request.ts';

/** Accept headers as browsers send them on a navigation. */
const CHROMIUM =
  'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8';
const FIREFOX = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('which GET /graphql is a browser asking for the explorer', () => {
  it.each([
    [CHROMIUM],
    [FIREFOX],
    ['text/html'],
    ['TEXT/HTML'],
    ['application/json;q=0.5, text/html'],
  ])('Accept: %s gets the page', (accept) => {
    expect(asksForExplorerPage('GET', accept)).toBe(true);
  });

  it.each([
    [undefined],
    [''],
    ['*/*'],
    ['application/json'],
    ['application/graphql-response+json, application/json;q=0.9'],
    // A tie goes to the API: a client that lists both keeps getting JSON.
    ['application/json, text/html'],
    ['text/html;q=0.5, application/graphql-response+json'],
    ['text/html;q=0'],
    ['text/*'],
  ])('Accept: %s keeps the API answer', (accept) => {
    expect(asksForExplorerPage('GET', accept)).toBe(false);
  });

  it.each([['POST'], ['HEAD'], ['PUT'], [undefined]])('%s never gets the page', (method) => {
    expect(asksForExplorerPage(method, CHROMIUM)).toBe(false);
  });
});
