import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_API_KEY_MESSAGE } from '../../gateway/explorer/browser/bearer-fetcher.ts';
import { launchChromium } from '../support/chromium.ts';
import { buildExplorerForTest, type BuiltExplorer } from '../support/explorer-bundle.ts';
import { useTestDatabase } from '../support/test-database.ts';
import { startTestStack, TENANT_A, type TestStack } from '../support/test-stack.ts';
import { waitUntil } from '../support/wait-until.ts';

/**
 * The explorer in headless Chromium (docs/decisions/0022-explorer-bundled-graphiql.md): a real
 * gateway serving the bundle built from this tree, the page loaded as a merchant loads it, the
 * test tenant's key entered, createPayment run, and the payment read back from the result pane
 * and the database. Every request the page makes must go to the gateway's own origin, and the
 * page must run under its CSP without a violation.
 */
const database = useTestDatabase('explorer_browser');
/**
 * How long any one step in the page may take (a load, a click, a result): bounded, never open.
 * Chromium parses a megabyte of script on the page's first load, slowly on a busy CI machine.
 */
const STEP_TIMEOUT_MS = 20_000;
/** The whole flow: a handful of steps, each bounded above. */
const FLOW_TIMEOUT_MS = 120_000;

let bundle: BuiltExplorer;
let stack: TestStack;
let browser: Browser | undefined;
let context: BrowserContext | undefined;

beforeAll(async () => {
  bundle = buildExplorerForTest();
  stack = await startTestStack({
    databaseUrl: database.url,
    app: { explorer: true, explorerBundleDir: bundle.dir },
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await context?.close();
  await browser?.close();
  await stack?.stop();
  bundle?.remove();
});

/** What the page did, for the assertions and for a failure's message. */
interface PageRecord {
  requests: Array<{ method: string; url: string; authorization: string | undefined }>;
  consoleErrors: string[];
}

async function openExplorer(): Promise<{ page: Page; record: PageRecord }> {
  context = await browser!.newContext();
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  const record: PageRecord = { requests: [], consoleErrors: [] };
  // On the context, not the page: a worker or a second page the explorer opened counts too.
  context.on('request', (request) =>
    record.requests.push({
      method: request.method(),
      url: request.url(),
      authorization: request.headers()['authorization'],
    }),
  );
  const page = await context.newPage();
  // Chromium reports each CSP violation, and each failed load, as a console error.
  page.on('console', (message) => {
    if (message.type() === 'error') record.consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => record.consoleErrors.push(`uncaught: ${error.message}`));
  const response = await page.goto(`${stack.app.url}/graphql`, { timeout: STEP_TIMEOUT_MS });
  expect(response?.status()).toBe(200);
  return { page, record };
}

/** The result pane's text once it holds `expected`, bounded by STEP_TIMEOUT_MS. */
function resultOnceItShows(page: Page, expected: string): Promise<string> {
  let last = '';
  return waitUntil(
    async () => {
      last = await page.locator('.result-window').innerText({ timeout: STEP_TIMEOUT_MS });
      return last.includes(expected) && last;
    },
    {
      timeoutMs: STEP_TIMEOUT_MS,
      what: () => `the result pane to show ${expected}; it shows:\n${last}`,
    },
  );
}

describe('the explorer in Chromium', () => {
  it(
    'sends nothing without a key, then creates a payment with one',
    async () => {
      const { page, record } = await openExplorer();
      const origin = new URL(stack.app.url).origin;
      const posts = () => record.requests.filter((r) => r.method === 'POST');
      const run = page.getByRole('button', { name: /execute query/i });

      // The first tab is createPayment with a fresh key; without an API key it is not sent.
      await run.click();
      await resultOnceItShows(page, NO_API_KEY_MESSAGE);
      expect(posts()).toEqual([]);

      await page.getByLabel('API key').fill(TENANT_A.apiKey);
      await page.getByRole('button', { name: 'Use key' }).click();
      await run.click();
      const text = await resultOnceItShows(page, '"status": "SUCCEEDED"');
      const id = /"id": "([0-9a-f-]{36})"/.exec(text)?.[1];
      const key = /"key": "(explorer-[0-9a-f]+)"/.exec(text)?.[1];
      expect(id, text).toBeDefined();
      expect(key, text).toBeDefined();

      // The payment exists, as the tenant whose key was entered, under the page's fresh key.
      const { rows } = await stack.db.query<{ status: string; tenant_id: string }>(
        'SELECT status, tenant_id FROM payments WHERE id = $1',
        [id],
      );
      expect(rows).toEqual([{ status: 'SUCCEEDED', tenant_id: stack.tenantIds.a }]);
      expect(posts()).toEqual([
        { method: 'POST', url: `${origin}/graphql`, authorization: `Bearer ${TENANT_A.apiKey}` },
      ]);

      // Every request — page, script, stylesheet, fonts, icon, GraphQL — went to the gateway.
      const elsewhere = record.requests.filter((r) => new URL(r.url).origin !== origin);
      expect(elsewhere).toEqual([]);
      expect(record.requests.length).toBeGreaterThan(4);
      expect(record.consoleErrors).toEqual([]);

      // The key lives in this tab's sessionStorage, never in localStorage.
      // A string, run in the page: this file is type-checked for Node, which has no window.
      const storage = JSON.parse(
        await page.evaluate<string>(
          'JSON.stringify({ local: JSON.stringify({ ...localStorage }), session: JSON.stringify({ ...sessionStorage }) })',
        ),
      ) as { local: string; session: string };
      expect(storage.local).not.toContain(TENANT_A.apiKey);
      expect(storage.session).toContain(TENANT_A.apiKey);
    },
    FLOW_TIMEOUT_MS,
  );
});
