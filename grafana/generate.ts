/**
 * Writes the dashboards to grafana/dashboards/*.json, the runbooks page to
 * grafana/runbooks/index.html, and RUNBOOKS_URL into the alert rules' `runbook_url`:
 * `npm run dashboards`.
 *
 * The output is formatted with the repository's Prettier settings, so `npm run format` leaves it
 * alone, and it holds no timestamps or random ids, so running this again gives no diff. The
 * dashboards unit test renders everything in memory and fails when a committed file is stale.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { withRunbookUrls } from './alert-runbook-urls.ts';
import { operationDashboard } from './builders/operation.ts';
import { overviewDashboard } from './builders/overview.ts';
import { renderRunbooksPage } from './runbooks-page.ts';

export const GRAFANA_DIR = fileURLToPath(new URL('./', import.meta.url));
export const DASHBOARDS_DIR = fileURLToPath(new URL('./dashboards/', import.meta.url));
/** Rule files whose `runbook_url` lines follow RUNBOOKS_URL, under grafana/. */
const RULE_FILES = ['alerts/payments.rules.yml', 'alerts/payments.rules.test.yml'];

/** The dashboards as objects, by file name under grafana/dashboards/. */
export function buildDashboards(): Record<string, object> {
  return {
    'overview.json': overviewDashboard(),
    'operation.json': operationDashboard(),
  };
}

async function prettier(text: string, path: string): Promise<string> {
  const options = (await resolveConfig(path)) ?? {};
  return format(text, { ...options, filepath: path });
}

/** The dashboards as the exact text of their committed files, by file name. */
export async function renderDashboards(): Promise<Record<string, string>> {
  const rendered: Record<string, string> = {};
  for (const [file, dashboard] of Object.entries(buildDashboards())) {
    rendered[file] = await prettier(JSON.stringify(dashboard), DASHBOARDS_DIR + file);
  }
  return rendered;
}

/**
 * The runbooks page and the rule files with their runbook links, as the exact text of their
 * committed files, by path under grafana/.
 */
export async function renderRunbookFiles(): Promise<Record<string, string>> {
  const page = 'runbooks/index.html';
  const markdown = await readFile(GRAFANA_DIR + 'RUNBOOKS.md', 'utf8');
  const rendered: Record<string, string> = {
    [page]: await prettier(renderRunbooksPage(markdown), GRAFANA_DIR + page),
  };
  for (const file of RULE_FILES) {
    rendered[file] = withRunbookUrls(await readFile(GRAFANA_DIR + file, 'utf8'));
  }
  return rendered;
}

async function main(): Promise<void> {
  const files: Record<string, string> = { ...(await renderRunbookFiles()) };
  for (const [file, text] of Object.entries(await renderDashboards())) {
    files[`dashboards/${file}`] = text;
  }
  for (const [path, text] of Object.entries(files)) {
    await writeFile(GRAFANA_DIR + path, text);
    console.log(`wrote grafana/${path}`);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
