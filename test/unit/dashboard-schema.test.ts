import { readFile, readdir } from 'node:fs/promises';
import { Ajv, type ErrorObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { DASHBOARDS_DIR } from '../../grafana/generate.ts';

// Grafana is not run by any test: these check the dashboards' JSON against grafana/
// dashboard.schema.json, our own schema of the part of Grafana's dashboard model that
// provisioning relies on (Grafana publishes no JSON Schema of it). A dashboard that breaks it
// loads in Grafana as panels with no data, no link or an overlapping layout, and nothing else
// fails.

const GRAFANA_DIR = new URL('../../grafana/', import.meta.url);
const readGrafana = (path: string) => readFile(new URL(path, GRAFANA_DIR), 'utf8');

const schemaShape = z.object({
  definitions: z.object({ datasourceUid: z.object({ const: z.string() }) }),
});

async function loadSchema(): Promise<object> {
  return z
    .record(z.string(), z.unknown())
    .parse(JSON.parse(await readGrafana('dashboard.schema.json')));
}

async function validator() {
  const ajv = new Ajv({ allErrors: true, strict: true });
  return ajv.compile(await loadSchema());
}

async function committedDashboards(): Promise<Array<{ file: string; json: unknown }>> {
  const files = (await readdir(DASHBOARDS_DIR)).filter((name) => name.endsWith('.json')).sort();
  return Promise.all(
    files.map(async (file) => ({
      file,
      json: JSON.parse(await readGrafana(`dashboards/${file}`)) as unknown,
    })),
  );
}

const describeErrors = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ''}`);

const gridPanels = z.object({
  panels: z.array(
    z.object({
      title: z.string(),
      gridPos: z.object({ x: z.number(), y: z.number(), w: z.number(), h: z.number() }),
    }),
  ),
});

describe('grafana/dashboard.schema.json', () => {
  it('names the data source uid that provisioning gives Grafana', async () => {
    const schema = schemaShape.parse(await loadSchema());
    const provisioning = z
      .object({
        datasources: z.array(z.object({ uid: z.string(), type: z.literal('prometheus') })),
      })
      .parse(parse(await readGrafana('provisioning/datasources/prometheus.yaml')));
    expect(provisioning.datasources.map((source) => source.uid)).toEqual([
      schema.definitions.datasourceUid.const,
    ]);
  });

  it('holds for every committed dashboard', async () => {
    const validate = await validator();
    const dashboards = await committedDashboards();
    expect(dashboards.length).toBeGreaterThan(0);
    for (const { file, json } of dashboards) {
      validate(json);
      expect(describeErrors(validate.errors), file).toEqual([]);
    }
  });

  // The schema is only worth its checks if it refuses what provisioning would load wrong.
  it.each([
    [
      'a relative runbook link',
      (panel: Record<string, unknown>) => {
        panel['links'] = [{ title: 'Runbook', url: 'grafana/RUNBOOKS.md#x', targetBlank: true }];
      },
    ],
    [
      'no runbook link',
      (panel: Record<string, unknown>) => {
        panel['links'] = [];
      },
    ],
    [
      'another data source',
      (panel: Record<string, unknown>) => {
        panel['datasource'] = { type: 'prometheus', uid: 'other' };
      },
    ],
    [
      'a query without expr',
      (panel: Record<string, unknown>) => {
        panel['targets'] = [{ refId: 'A', datasource: { type: 'prometheus', uid: 'prometheus' } }];
      },
    ],
    [
      'no gridPos',
      (panel: Record<string, unknown>) => {
        delete panel['gridPos'];
      },
    ],
  ])('refuses a panel with %s', async (_what, spoil) => {
    const validate = await validator();
    const [first] = await committedDashboards();
    const dashboard = z
      .object({ panels: z.array(z.record(z.string(), z.unknown())) })
      .passthrough()
      .parse(first?.json);
    const panel = dashboard.panels.find((p) => p['type'] !== 'row');
    expect(panel).toBeDefined();
    spoil(panel!);
    expect(validate(dashboard)).toBe(false);
  });

  it('lays every panel inside the 24-column grid, none over another', async () => {
    const problems: string[] = [];
    for (const { file, json } of await committedDashboards()) {
      const cells = new Map<string, string>();
      for (const { title, gridPos } of gridPanels.parse(json).panels) {
        if (gridPos.x + gridPos.w > 24) problems.push(`${file} "${title}": past column 24`);
        for (let x = gridPos.x; x < gridPos.x + gridPos.w; x++) {
          for (let y = gridPos.y; y < gridPos.y + gridPos.h; y++) {
            const other = cells.get(`${x},${y}`);
            if (other !== undefined) problems.push(`${file} "${title}" overlaps "${other}"`);
            cells.set(`${x},${y}`, title);
          }
        }
      }
    }
    expect([...new Set(problems)]).toEqual([]);
  });
});
