import { readFile, readdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { RUNBOOKS_URL } from '../../grafana/builders/runbooks.ts';
import { headings } from '../../grafana/runbook-anchors.ts';
import { launchChromium } from '../support/chromium.ts';

/**
 * grafana/runbooks/index.html in headless Chromium, as the compose file's runbooks service
 * serves it: every runbook link of a panel or an alert, with RUNBOOKS_URL swapped for this
 * test's server, must open the page at its section's heading, and a link between sections must
 * move there. A heading whose id drifted from the links would open the top of the page, which no
 * other test sees.
 */
const GRAFANA_DIR = fileURLToPath(new URL('../../grafana/', import.meta.url));
/** A page of a few hundred lines loads in well under a second; a busy CI machine is slower. */
const STEP_TIMEOUT_MS = 20_000;

let server: Server;
let origin: string;
let browser: Browser | undefined;
let page: Page;
const consoleErrors: string[] = [];

/** Serves grafana/runbooks/index.html at / only, as the nginx of compose.yaml does. */
function serveRunbooks(): Promise<Server> {
  const started = createServer((request, response) => {
    if (request.url !== '/' && request.url !== '/index.html') {
      response.writeHead(404).end();
      return;
    }
    readFile(`${GRAFANA_DIR}runbooks/index.html`).then(
      (html) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html),
      () => response.writeHead(500).end(),
    );
  });
  return new Promise((resolve) => started.listen(0, '127.0.0.1', () => resolve(started)));
}

beforeAll(async () => {
  server = await serveRunbooks();
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
  page = await browser.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(`uncaught: ${error.message}`));
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

const panelLinks = z.object({
  panels: z.array(z.object({ links: z.array(z.object({ url: z.string() })).optional() })),
});
const ruleLinks = z.object({
  groups: z.array(
    z.object({ rules: z.array(z.object({ annotations: z.object({ runbook_url: z.string() }) })) }),
  ),
});

/** Every runbook link of the committed dashboards and alert rules, once each. */
async function runbookLinks(): Promise<string[]> {
  const links = new Set<string>();
  for (const file of await readdir(`${GRAFANA_DIR}dashboards`)) {
    const json: unknown = JSON.parse(await readFile(`${GRAFANA_DIR}dashboards/${file}`, 'utf8'));
    for (const panel of panelLinks.parse(json).panels) {
      for (const link of panel.links ?? []) links.add(link.url);
    }
  }
  const rules = ruleLinks.parse(
    parse(await readFile(`${GRAFANA_DIR}alerts/payments.rules.yml`, 'utf8')),
  );
  for (const rule of rules.groups.flatMap((group) => group.rules)) {
    links.add(rule.annotations.runbook_url);
  }
  return [...links].sort();
}

const targetShape = z
  .object({ tag: z.string(), id: z.string(), text: z.string(), onScreen: z.boolean() })
  .nullable();

/**
 * The element the page's fragment selects, and whether it is on screen. A string, run in the
 * page: this file is type-checked for Node, which has no document.
 */
async function target(): Promise<z.infer<typeof targetShape>> {
  const json = await page.evaluate<string>(`(() => {
    const element = document.querySelector(':target');
    if (element === null) return 'null';
    const top = element.getBoundingClientRect().top;
    return JSON.stringify({
      tag: element.tagName.toLowerCase(),
      id: element.id,
      text: element.textContent,
      onScreen: top >= 0 && top < window.innerHeight,
    });
  })()`);
  return targetShape.parse(JSON.parse(json));
}

describe('the runbooks page', () => {
  it('opens at the heading of every section a panel or an alert links to', async () => {
    const sections = new Map(
      headings(await readFile(`${GRAFANA_DIR}RUNBOOKS.md`, 'utf8')).map((h) => [h.anchor, h]),
    );
    const links = await runbookLinks();
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) {
      expect(link.startsWith(RUNBOOKS_URL), link).toBe(true);
      const here = new URL(link.slice(RUNBOOKS_URL.length), `${origin}/`);
      // From elsewhere, so each link is a page load as from Grafana, not a jump within the page.
      await page.goto('about:blank');
      const response = await page.goto(here.href);
      expect(response?.status(), link).toBe(200);
      const anchor = here.hash.slice(1);
      const heading = sections.get(anchor);
      expect(await target(), link).toEqual({
        tag: `h${heading?.level}`,
        id: anchor,
        text: heading?.text,
        onScreen: true,
      });
    }
  });

  it('moves to a section when a link to it is clicked', async () => {
    await page.goto(`${origin}/`);
    const links = page.locator('a[href="#providertimeoutratehigh"]');
    expect(await links.count()).toBeGreaterThan(0);
    await links.first().click();
    expect(await target()).toMatchObject({ id: 'providertimeoutratehigh', onScreen: true });
  });

  it('logs no error', () => {
    expect(consoleErrors).toEqual([]);
  });
});
