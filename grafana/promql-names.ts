/**
 * The metric names a PromQL expression reads. Not a parser: it removes what cannot hold a metric
 * name (strings, label matchers, ranges, `by (...)`-style label lists), then keeps identifiers
 * that are not called like functions and are not keywords. Good enough for our own queries; the
 * dashboards test uses it to catch a panel or alert reading a metric no code exports, which
 * Prometheus and Grafana would show as an empty graph rather than an error.
 */

const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'inf',
  'nan',
  'atan2',
]);

export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  // Whole identifiers only (not the tail of `5m`, `1e3` or `$__rate_interval`), not followed by
  // `(` (a function or aggregation).
  for (const match of stripped.matchAll(/(?<![\w.:$])[A-Za-z_:][\w:]*(?![\w:])(?!\s*\()/g)) {
    if (!KEYWORDS.has(match[0].toLowerCase())) names.add(match[0]);
  }
  return [...names].sort();
}

/** The metric of a Grafana `label_values(metric, label)` variable query. */
export function labelValuesMetric(query: string): string | undefined {
  return /^label_values\(\s*([A-Za-z_:][\w:]*)\s*,\s*\w+\s*\)$/.exec(query.trim())?.[1];
}
