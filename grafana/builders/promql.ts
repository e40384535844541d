/**
 * Selectors shared by the overview (whole fleet) and the drill-down (one operation). Every series
 * also carries a `service` label; each query aggregates with `sum by` / `max by`, so the panels
 * do not split into one line per service.
 */

/** Which requests a panel covers: a label matcher, or '' for all of them. */
export interface Scope {
  matcher: string;
}

export const FLEET: Scope = { matcher: '' };
export const ONE_OPERATION: Scope = { matcher: 'operation="$operation"' };

/** `metric{matchers}`, leaving out the braces when there is nothing to match. */
export function select(metric: string, scope: Scope, extra = ''): string {
  const matchers = [scope.matcher, extra].filter((part) => part !== '').join(', ');
  return matchers === '' ? metric : `${metric}{${matchers}}`;
}

/** Per-second rate over Grafana's interval, which always spans at least four scrapes. */
export function rate(selector: string): string {
  return `rate(${selector}[$__rate_interval])`;
}

export function quantile(q: number, buckets: { selector: string; by: string[] }): string {
  const by = ['le', ...buckets.by].join(', ');
  return `histogram_quantile(${q}, sum by (${by}) (${rate(buckets.selector)}))`;
}
