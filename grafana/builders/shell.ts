/** What both dashboards share: tags, time range, refresh, links to each other. */
import {
  DashboardBuilder,
  DashboardCursorSync,
  DashboardLinkBuilder,
  DashboardLinkType,
} from '@grafana/grafana-foundation-sdk/dashboard';

/** Both dashboards carry it; the link bar lists every dashboard with it. */
const TAG = 'payments-gateway';

export function dashboardShell(spec: { uid: string; title: string }): DashboardBuilder {
  return (
    new DashboardBuilder(spec.title)
      .uid(spec.uid)
      .tags([TAG, 'generated'])
      // Generated: edits made in Grafana would be lost at the next provisioning, so forbid them.
      .readonly()
      .tooltip(DashboardCursorSync.Crosshair)
      .time({ from: 'now-3h', to: 'now' })
      .refresh('30s')
      .link(
        new DashboardLinkBuilder('Payments gateway')
          .type(DashboardLinkType.Dashboards)
          .tags([TAG])
          .asDropdown(true)
          .keepTime(true)
          .includeVars(true),
      )
  );
}
