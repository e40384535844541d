/**
 * Every query of the committed dashboards. Run as a script, prints them as a Prometheus rule
 * file (JSON, which is YAML), for `promtool check rules` to parse: a PromQL syntax error in a
 * panel then fails CI instead of showing up as a red triangle in Grafana. Grafana's variables
 * are replaced with sample values first ($__rate_interval by a duration, $operation by an
 * operation name). test/integration/prometheus.test.ts runs the same queries against a live
 * Prometheus.
 */
import { readFile, readdir } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { DASHBOARDS_DIR } from './generate.ts';

interface Target {
  expr?: string;
  legendFormat?: string;
}
interface PanelJson {
  title?: string;
  targets?: Target[];
}

/** One query of one panel, with Grafana's variables (`$operation`, `$__rate_interval`) left in. */
export interface DashboardTarget {
  file: string;
  panel: string;
  expr: string;
  /** Grafana's legend template: `{{label}}` is replaced by that label of each series. */
  legend: string;
}

/** The queries of grafana/dashboards/*.json, in file and panel order. */
export async function dashboardTargets(): Promise<DashboardTarget[]> {
  const targets: DashboardTarget[] = [];
  const files = (await readdir(DASHBOARDS_DIR)).filter((name) => name.endsWith('.json')).sort();
  for (const file of files) {
    const dashboard = JSON.parse(await readFile(DASHBOARDS_DIR + file, 'utf8')) as {
      panels?: PanelJson[];
    };
    for (const panel of dashboard.panels ?? []) {
      for (const target of panel.targets ?? []) {
        if (target.expr === undefined) continue;
        targets.push({
          file,
          panel: panel.title ?? '(untitled)',
          expr: target.expr,
          legend: target.legendFormat ?? '',
        });
      }
    }
  }
  return targets;
}

function promqlOf(expr: string): string {
  return expr.replace(/\$__\w+/g, '5m').replace(/\$\{?(\w+)\}?/g, 'sample_$1');
}

async function main(): Promise<void> {
  const rules = (await dashboardTargets()).map((target, index) => ({
    record: `dashboard:query:${index + 1}`,
    expr: promqlOf(target.expr),
  }));
  console.log(JSON.stringify({ groups: [{ name: 'dashboard-queries', rules }] }, null, 2));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
