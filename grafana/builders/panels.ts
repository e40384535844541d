/**
 * Panel factories over the foundation SDK. Every panel states its unit, colours the values that
 * need someone (thresholds) and says in its description what to do when it turns red, so a
 * panel added without that guidance fails to compile instead of reaching on-call.
 */
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import type * as common from '@grafana/grafana-foundation-sdk/common';
import {
  BigValueColorMode,
  BigValueGraphMode,
  GraphThresholdsStyleConfigBuilder,
  GraphThresholdsStyleMode,
  LegendDisplayMode,
  LegendPlacement,
  ReduceDataOptionsBuilder,
  SortOrder,
  TooltipDisplayMode,
  VizLegendOptionsBuilder,
  VizTooltipOptionsBuilder,
} from '@grafana/grafana-foundation-sdk/common';
import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import { DataqueryBuilder } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder as StatBuilder } from '@grafana/grafana-foundation-sdk/stat';
import { PanelBuilder as TimeseriesBuilder } from '@grafana/grafana-foundation-sdk/timeseries';

/** Must equal the uid in provisioning/datasources/prometheus.yaml, or every panel says "No data". */
export const PROMETHEUS: common.DataSourceRef = { type: 'prometheus', uid: 'prometheus' };

export interface Query {
  expr: string;
  legend: string;
}

/**
 * Values at or above `value` take `color`; below the first step a value is fine (green). With
 * `lowIsBad`, the other way round: values below `value` take `color`, and a value at or above
 * every step is fine.
 */
export interface Step {
  value: number;
  color: 'yellow' | 'orange' | 'red';
}

export interface PanelSpec {
  title: string;
  /** What the panel shows, and what to do when it turns red. */
  description: string;
  /** Absolute URL of the runbook section (RUNBOOK in runbooks.ts): the panel's link and its description's. */
  runbook: string;
  unit: string;
  queries: Query[];
  /** Empty only where no value is bad in itself (traffic, throughput). */
  thresholds: Step[];
  /** The steps mark values too low (time left, headroom), not too high. */
  lowIsBad?: true;
  /** Series (legend regex) that are bad whatever their value, drawn red: errors, failures. */
  alarmSeries?: string;
  width?: number;
}

export type Panel = cog.Builder<dashboard.Panel> & { id(id: number): unknown };

const HEIGHT = 8;

export function timeseries(spec: PanelSpec): Panel {
  const panel = new TimeseriesBuilder()
    .title(spec.title)
    .description(describe(spec))
    .links([runbookLink(spec)])
    .datasource(PROMETHEUS)
    .unit(spec.unit)
    .min(0)
    .thresholds(thresholds(spec))
    .legend(
      new VizLegendOptionsBuilder()
        .showLegend(true)
        .displayMode(LegendDisplayMode.List)
        .placement(LegendPlacement.Bottom),
    )
    // All series at the hovered time, worst first: "which outcome spiked" in one glance.
    .tooltip(
      new VizTooltipOptionsBuilder().mode(TooltipDisplayMode.Multi).sort(SortOrder.Descending),
    )
    .height(HEIGHT)
    .span(spec.width ?? 8);
  // A dashed line and a tinted band mark where a series turns bad.
  if (spec.thresholds.length > 0) {
    panel.thresholdsStyle(
      new GraphThresholdsStyleConfigBuilder().mode(GraphThresholdsStyleMode.DashedAndArea),
    );
  }
  if (spec.alarmSeries !== undefined) {
    panel.overrideByRegexp(spec.alarmSeries, [
      { id: 'color', value: { mode: 'fixed', fixedColor: 'red' } },
    ]);
  }
  for (const query of targets(spec.queries)) panel.withTarget(query);
  return panel;
}

/** A single current value whose background turns yellow or red: for "is it bad right now". */
export function stat(spec: PanelSpec): Panel {
  const panel = new StatBuilder()
    .title(spec.title)
    .description(describe(spec))
    .links([runbookLink(spec)])
    .datasource(PROMETHEUS)
    .unit(spec.unit)
    .thresholds(thresholds(spec))
    .colorMode(BigValueColorMode.Background)
    .graphMode(BigValueGraphMode.Area)
    .reduceOptions(new ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false))
    .height(HEIGHT)
    .span(spec.width ?? 8);
  for (const query of targets(spec.queries)) panel.withTarget(query);
  return panel;
}

/** Grafana renders a description as Markdown, in the tooltip of the panel's (i). */
function describe(spec: PanelSpec): string {
  return `${spec.description} [Runbook](${spec.runbook})`;
}

/** In the panel's header and its menu: one click from a red panel to what to do. */
function runbookLink(spec: PanelSpec): dashboard.DashboardLinkBuilder {
  return new dashboard.DashboardLinkBuilder('Runbook')
    .type(dashboard.DashboardLinkType.Link)
    .url(spec.runbook)
    .targetBlank(true);
}

function thresholds(spec: PanelSpec): dashboard.ThresholdsConfigBuilder {
  return new dashboard.ThresholdsConfigBuilder()
    .mode(dashboard.ThresholdsMode.Absolute)
    .steps(
      spec.lowIsBad === true ? lowIsBadSteps(spec.thresholds) : highIsBadSteps(spec.thresholds),
    );
}

function highIsBadSteps(steps: Step[]): dashboard.Threshold[] {
  return [{ value: null, color: 'green' }, ...steps];
}

/**
 * Grafana colours a value by the highest step at or below it, so "below 0.5 is red, below 0.9
 * yellow" is: red from the bottom, yellow from 0.5, green from 0.9.
 */
function lowIsBadSteps(steps: Step[]): dashboard.Threshold[] {
  const ascending = [...steps].sort((a, b) => a.value - b.value);
  if (ascending.length === 0) return highIsBadSteps([]);
  return [
    { value: null, color: ascending[0]!.color },
    ...ascending.map((step, i) => ({
      value: step.value,
      color: ascending[i + 1]?.color ?? 'green',
    })),
  ];
}

function targets(queries: Query[]): DataqueryBuilder[] {
  // Fixed refIds keep the JSON identical from one generation to the next.
  return queries.map((query, index) =>
    new DataqueryBuilder()
      .datasource(PROMETHEUS)
      .expr(query.expr)
      .legendFormat(query.legend)
      .range()
      .refId(String.fromCharCode(65 + index)),
  );
}
