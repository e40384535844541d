import { readFile, readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { partitionRunway } from '../../grafana/builders/fleet-panels.ts';
import { PROMETHEUS, stat } from '../../grafana/builders/panels.ts';
import { RUNBOOKS_URL } from '../../grafana/builders/runbooks.ts';
import { DASHBOARDS_DIR, renderDashboards, renderRunbookFiles } from '../../grafana/generate.ts';
import { labelValuesMetric, metricNames } from '../../grafana/promql-names.ts';
import { headingAnchor, headings } from '../../grafana/runbook-anchors.ts';
import { createLibMetrics, createMetricsRegistry, registerFleetGauges } from '../../lib/metrics.ts';
import { createLedgerMetrics } from '../../services/ledger/index.ts';
import { createProviderMetrics } from '../../services/provider/index.ts';
import { createGatewayMetrics } from '../../gateway/http/gateway.metrics.ts';

// A panel or alert that reads a metric nobody exports does not fail anywhere: Grafana draws an
// empty graph and Prometheus never fires. These tests make a misspelt or renamed metric, a
// stale generated file or a dead runbook link fail here instead.

const GRAFANA_DIR = new URL('../../grafana/', import.meta.url);
const readGrafana = (path: string) => readFile(new URL(path, GRAFANA_DIR), 'utf8');

const dashboardSchema = z.object({
  uid: z.string(),
  templating: z.object({
    list: z.array(z.object({ name: z.string(), query: z.unknown() })).optional(),
  }),
  panels: z.array(
    z.object({
      type: z.string(),
      title: z.string(),
      description: z.string().optional(),
      datasource: z.object({ uid: z.string() }).optional(),
      links: z.array(z.object({ url: z.string().optional() })).optional(),
      fieldConfig: z.object({ defaults: z.object({ unit: z.string().optional() }) }).optional(),
      targets: z
        .array(z.object({ expr: z.string(), datasource: z.object({ uid: z.string() }) }))
        .optional(),
    }),
  ),
});
type Dashboard = z.infer<typeof dashboardSchema>;

const rulesSchema = z.object({
  groups: z.array(
    z.object({
      rules: z.array(
        z.object({
          alert: z.string(),
          expr: z.string(),
          labels: z.object({ severity: z.enum(['critical', 'warning']) }),
          annotations: z.object({ summary: z.string(), runbook_url: z.string() }),
        }),
      ),
    }),
  ),
});

const rulesTestSchema = z.object({
  tests: z.array(
    z.object({
      alert_rule_test: z.array(
        z.object({ alertname: z.string(), exp_alerts: z.array(z.unknown()).nullish() }),
      ),
    }),
  ),
});

/** Every series name the code can export: every part's series plus the fleet gauges. */
async function definedMetricNames(): Promise<Set<string>> {
  const registry = createMetricsRegistry({ defaultMetrics: true });
  const metrics = createLibMetrics(registry);
  createProviderMetrics(registry);
  createLedgerMetrics(registry);
  createGatewayMetrics(registry);
  registerFleetGauges(
    metrics,
    {
      unfinished: () => Promise.resolve([]),
      outbox: () => Promise.resolve([]),
      replication: () => Promise.resolve({ visible: true, standbys: 0, synchronous: 0 }),
    },
    'gateway',
  );
  const names = new Set<string>();
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    names.add(metric.name);
    const type = String(metric.type);
    const suffixes =
      type === 'histogram'
        ? ['_bucket', '_sum', '_count']
        : type === 'summary'
          ? ['_sum', '_count']
          : [];
    for (const suffix of suffixes) names.add(metric.name + suffix);
  }
  return names;
}

async function committedDashboards(): Promise<Array<{ file: string; dashboard: Dashboard }>> {
  const files = (await readdir(DASHBOARDS_DIR)).filter((name) => name.endsWith('.json')).sort();
  return Promise.all(
    files.map(async (file) => ({
      file,
      dashboard: dashboardSchema.parse(JSON.parse(await readGrafana(`dashboards/${file}`))),
    })),
  );
}

async function alertRules() {
  const rules = rulesSchema.parse(parse(await readGrafana('alerts/payments.rules.yml')));
  return rules.groups.flatMap((group) => group.rules);
}

/** GitHub's heading anchors, outside fenced code blocks. */
async function runbookAnchors(): Promise<Set<string>> {
  return new Set(headings(await readGrafana('RUNBOOKS.md')).map((heading) => heading.anchor));
}

/**
 * The section an absolute http(s) link to the runbooks, where RUNBOOKS_URL says they are served,
 * opens; undefined for any other link (a relative path opens nothing from Grafana).
 */
function runbookAnchorOf(url: string): string | undefined {
  if (!url.startsWith(`${RUNBOOKS_URL}#`)) return undefined;
  return /^https?:\/\/[^\s#]+#([\w-]+)$/.exec(url)?.[1];
}

/** A panel description's Markdown link to its runbook. */
const RUNBOOK_LINK = /\[Runbook\]\(([^)\s]*)\)/g;

describe('headingAnchor', () => {
  it.each([
    ['IdempotencyUnknownOutcomes', 'idempotencyunknownoutcomes'],
    ['Gateway saturation (no alert)', 'gateway-saturation-no-alert'],
    ['  A `code`, a_b and 2 hyphens -- ', 'a-code-a_b-and-2-hyphens---'],
  ])('anchors %j at #%s, as GitHub does', (heading, anchor) => {
    expect(headingAnchor(heading)).toBe(anchor);
  });

  it('ignores headings inside fenced code', () => {
    const markdown = '# Top\n```sh\n# a shell comment\n```\n## Next ##\n';
    expect(headings(markdown).map((h) => h.anchor)).toEqual(['top', 'next']);
  });
});

describe('metricNames', () => {
  it.each([
    [
      'sum by (outcome) (rate(idempotency_requests_total[$__rate_interval]))',
      ['idempotency_requests_total'],
    ],
    [
      'histogram_quantile(0.95, sum by (le) (rate(graphql_request_duration_seconds_bucket{operation="$operation"}[5m])))',
      ['graphql_request_duration_seconds_bucket'],
    ],
    [
      'a_total / on (operation) group_left b_seconds > 0.05 and sum(c offset 5m) without (le) >= 1e3',
      ['a_total', 'b_seconds', 'c'],
    ],
    ['time() - max(ts_seconds > 0) > 300 or vector(0)', ['ts_seconds']],
  ])('%s reads %j', (expr, names) => {
    expect(metricNames(expr)).toEqual(names);
  });

  it('reads the metric of a label_values() variable', () => {
    expect(labelValuesMetric('label_values(idempotency_requests_total, operation)')).toBe(
      'idempotency_requests_total',
    );
  });
});

describe('dashboards', () => {
  it('are exactly what grafana/generate.ts writes (else run `npm run dashboards`)', async () => {
    const rendered = await renderDashboards();
    const committed = (await readdir(DASHBOARDS_DIR)).filter((name) => name.endsWith('.json'));
    expect(committed.sort()).toEqual(Object.keys(rendered).sort());
    for (const [file, text] of Object.entries(rendered)) {
      expect(await readGrafana(`dashboards/${file}`), file).toBe(text);
    }
  });

  it('come with the runbooks page and alert links that grafana/generate.ts writes', async () => {
    for (const [path, text] of Object.entries(await renderRunbookFiles())) {
      expect(await readGrafana(path), `${path}: run \`npm run dashboards\``).toBe(text);
    }
  });

  it('read only metrics the code defines', async () => {
    const defined = await definedMetricNames();
    const undefinedNames: string[] = [];
    for (const { file, dashboard } of await committedDashboards()) {
      for (const panel of dashboard.panels) {
        for (const target of panel.targets ?? []) {
          for (const name of metricNames(target.expr)) {
            if (!defined.has(name)) undefinedNames.push(`${file} "${panel.title}": ${name}`);
          }
        }
      }
      for (const variable of dashboard.templating.list ?? []) {
        const name = labelValuesMetric(String(variable.query));
        if (name === undefined || !defined.has(name)) {
          undefinedNames.push(`${file} variable ${variable.name}: ${String(variable.query)}`);
        }
      }
    }
    expect(undefinedNames).toEqual([]);
  });

  it('give every panel a unit, the provisioned data source and a runbook section', async () => {
    const anchors = await runbookAnchors();
    const provisioning = z
      .object({ datasources: z.array(z.object({ uid: z.string(), type: z.string() })) })
      .parse(parse(await readGrafana('provisioning/datasources/prometheus.yaml')));
    expect(provisioning.datasources).toContainEqual(PROMETHEUS);
    const problems: string[] = [];
    for (const { file, dashboard } of await committedDashboards()) {
      for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
        const where = `${file} "${panel.title}"`;
        if (!panel.fieldConfig?.defaults.unit) problems.push(`${where}: no unit`);
        const uids = [panel.datasource, ...(panel.targets ?? []).map((t) => t.datasource)];
        if (uids.some((ref) => ref?.uid !== PROMETHEUS.uid)) problems.push(`${where}: data source`);
        const described = [...(panel.description ?? '').matchAll(RUNBOOK_LINK)];
        if (described.length === 0) problems.push(`${where}: no runbook link in its description`);
        // The panel's link (its header's link icon) goes where its description says.
        const urls = (panel.links ?? []).map((link) => link.url ?? '');
        if (urls.length === 0) problems.push(`${where}: no runbook link`);
        for (const url of [...urls, ...described.map((link) => link[1] ?? '')]) {
          const anchor = runbookAnchorOf(url);
          if (anchor === undefined) problems.push(`${where}: not an absolute runbook link: ${url}`);
          else if (!anchors.has(anchor)) problems.push(`${where}: no runbook section ${url}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

/** The colour Grafana gives `value`: that of the highest step at or below it. */
function colourOf(steps: Array<{ value: number | null; color: string }>, value: number): string {
  let colour = steps[0]?.color ?? 'none';
  for (const step of steps) if (step.value === null || step.value <= value) colour = step.color;
  return colour;
}

const thresholdSteps = z.object({
  fieldConfig: z.object({
    defaults: z.object({
      thresholds: z.object({
        steps: z.array(z.object({ value: z.number().nullable(), color: z.string() })),
      }),
    }),
  }),
});

describe('thresholds', () => {
  it('colour a value that is bad when high red at the top and green at the bottom', () => {
    const panel = stat({ ...partitionRunway(), lowIsBad: undefined }).build();
    const { steps } = thresholdSteps.parse(panel).fieldConfig.defaults.thresholds;
    expect([0.2, 0.7, 1.5].map((v) => colourOf(steps, v))).toEqual(['green', 'red', 'yellow']);
  });

  it('colour a value that is bad when low red at the bottom and green at the top', () => {
    const { steps } = thresholdSteps.parse(stat(partitionRunway()).build()).fieldConfig.defaults
      .thresholds;
    expect([-1, 0.2, 0.49, 0.5, 0.89, 0.9, 1.5].map((v) => colourOf(steps, v))).toEqual([
      'red',
      'red',
      'red',
      'yellow',
      'yellow',
      'green',
      'green',
    ]);
  });

  it('turn the partition runway red exactly where IdempotencyPartitionsRunningOut fires', async () => {
    const rule = (await alertRules()).find((r) => r.alert === 'IdempotencyPartitionsRunningOut');
    const share = Number(
      /<\s*([\d.]+)\s*\*\s*max\(idempotency_partitions_slack_seconds\)/.exec(rule?.expr ?? '')?.[1],
    );
    expect(share).toBeGreaterThan(0);
    // Read raw: the dashboard schema above keeps only what the other tests look at.
    const overview = z
      .object({ panels: z.array(z.object({ title: z.string() }).passthrough()) })
      .parse(JSON.parse(await readGrafana('dashboards/overview.json')));
    const runway = overview.panels.find((p) => p.title === partitionRunway().title);
    const { steps } = thresholdSteps.parse(runway).fieldConfig.defaults.thresholds;
    expect(colourOf(steps, share - 0.001)).toBe('red');
    expect(colourOf(steps, share)).not.toBe('red');
    expect(colourOf(steps, 1)).toBe('green'); // just after a maintenance run
  });
});

describe('alert rules', () => {
  it('read only metrics the code defines', async () => {
    const defined = await definedMetricNames();
    const undefinedNames = (await alertRules()).flatMap((rule) =>
      metricNames(rule.expr)
        .filter((name) => !defined.has(name))
        .map((name) => `${rule.alert}: ${name}`),
    );
    expect(undefinedNames).toEqual([]);
  });

  it('link to a runbook section that exists, by absolute URL', async () => {
    const anchors = await runbookAnchors();
    for (const rule of await alertRules()) {
      const anchor = runbookAnchorOf(rule.annotations.runbook_url);
      expect(anchor, `${rule.alert}: ${rule.annotations.runbook_url}`).toBeDefined();
      expect(anchors.has(anchor ?? ''), `${rule.alert}: ${rule.annotations.runbook_url}`).toBe(
        true,
      );
    }
  });

  it('each have a promtool test where they fire and one where they stay quiet', async () => {
    const cases = rulesTestSchema
      .parse(parse(await readGrafana('alerts/payments.rules.test.yml')))
      .tests.flatMap((test) => test.alert_rule_test);
    for (const { alert } of await alertRules()) {
      const own = cases.filter((c) => c.alertname === alert);
      expect(
        own.some((c) => (c.exp_alerts ?? []).length > 0),
        `${alert} fires`,
      ).toBe(true);
      expect(
        own.some((c) => (c.exp_alerts ?? []).length === 0),
        `${alert} stays quiet`,
      ).toBe(true);
    }
  });
});
