/**
 * Writes the dashboards to grafana/dashboards/*.json: `npm run dashboards`.
 *
 * The output is formatted with the repository's Prettier settings, so `npm run format` leaves it
 * alone, and it holds no timestamps or random ids, so running this again gives no diff. The
 * dashboards unit test renders them in memory and fails when the committed files are stale.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { operationDashboard } from './builders/operation.ts';
import { overviewDashboard } from './builders/overview.ts';

export const DASHBOARDS_DIR = fileURLToPath(new URL('./dashboards/', import.meta.url));

/** The dashboards as objects, by file name under grafana/dashboards/. */
export function buildDashboards(): Record<string, object> {
  return {
    'overview.json': overviewDashboard(),
    'operation.json': operationDashboard(),
  };
}

/** The dashboards as the exact text of their committed files, by file name. */
export async function renderDashboards(): Promise<Record<string, string>> {
  const rendered: Record<string, string> = {};
  for (const [file, dashboard] of Object.entries(buildDashboards())) {
    const path = DASHBOARDS_DIR + file;
    const options = (await resolveConfig(path)) ?? {};
    rendered[file] = await format(JSON.stringify(dashboard), { ...options, filepath: path });
  }
  return rendered;
}

async function main(): Promise<void> {
  for (const [file, text] of Object.entries(await renderDashboards())) {
    await writeFile(DASHBOARDS_DIR + file, text);
    console.log(`wrote grafana/dashboards/${file}`);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
