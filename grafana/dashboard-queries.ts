/**
 * Prints every dashboard query as a Prometheus rule file (JSON, which is YAML), for
 * `promtool check rules` to parse: a PromQL syntax error in a panel then fails CI instead of
 * showing up as a red triangle in Grafana. Grafana's variables are replaced with sample values
 * first ($__rate_interval by a duration, $operation by an operation name).
 */
import { readFile, readdir } from 'node:fs/promises';
import { DASHBOARDS_DIR } from './generate.ts';

interface Target {
  expr?: string;
}
interface PanelJson {
  title?: string;
  targets?: Target[];
}

function promqlOf(expr: string): string {
  return expr.replace(/\$__\w+/g, '5m').replace(/\$\{?(\w+)\}?/g, 'sample_$1');
}

const rules: Array<{ record: string; expr: string }> = [];
const files = (await readdir(DASHBOARDS_DIR)).filter((name) => name.endsWith('.json')).sort();
for (const file of files) {
  const dashboard = JSON.parse(await readFile(DASHBOARDS_DIR + file, 'utf8')) as {
    panels?: PanelJson[];
  };
  for (const panel of dashboard.panels ?? []) {
    for (const target of panel.targets ?? []) {
      if (target.expr === undefined) continue;
      rules.push({ record: `dashboard:query:${rules.length + 1}`, expr: promqlOf(target.expr) });
    }
  }
}
console.log(JSON.stringify({ groups: [{ name: 'dashboard-queries', rules }] }, null, 2));
