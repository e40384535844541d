/**
 * Rows of panels, with ids given in order. Grafana keys panel links and saved views on ids;
 * assigning them here keeps them stable when the generator runs again.
 */
import { RowBuilder, type DashboardBuilder } from '@grafana/grafana-foundation-sdk/dashboard';
import type { Panel } from './panels.ts';

export interface Row {
  title: string;
  panels: Panel[];
}

export function addRows(dashboard: DashboardBuilder, rows: Row[]): DashboardBuilder {
  let id = 1;
  for (const row of rows) {
    dashboard.withRow(new RowBuilder(row.title).id(id++));
    for (const panel of row.panels) {
      panel.id(id++);
      dashboard.withPanel(panel);
    }
  }
  return dashboard;
}
