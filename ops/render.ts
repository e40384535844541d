import Table from 'cli-table3';

/**
 * Plain borders, no colours: the same text in a terminal, a CI log and a pasted incident note
 * (cli-table3 colours headings red by default, which litters logs with escape codes).
 */
export function table(head: string[], opts: { compact?: boolean } = {}): Table.Table {
  return new Table({ head, style: { head: [], border: [], compact: opts.compact ?? false } });
}

/** A two-column name/value table, for reports. */
export function reportTable(entries: ReadonlyArray<readonly [string, string | number]>): string {
  const out = new Table({ style: { head: [], border: [] } });
  for (const [name, value] of entries) out.push([name, String(value)]);
  return out.toString();
}

/**
 * Text that came from the database (reasons, actors, keys) goes to a terminal: control
 * characters could move the cursor or rewrite earlier lines, and a newline would break the
 * one-line-per-entry layout.
 */
export function clean(text: string, maxChars = 200): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ');
  return flat.length <= maxChars ? flat : `${flat.slice(0, maxChars - 1)}…`;
}

/** Keys often share a prefix (order-…) and differ at the end: keep both ends. */
export function truncateMiddle(text: string, maxChars: number): string {
  const flat = clean(text, Number.MAX_SAFE_INTEGER);
  if (flat.length <= maxChars) return flat;
  const tail = Math.floor((maxChars - 1) / 2);
  const head = maxChars - 1 - tail;
  return `${flat.slice(0, head)}…${flat.slice(flat.length - tail)}`;
}

/** Tenant ids are UUIDs; the first block tells tenants apart on a screen. */
export function shortId(uuid: string): string {
  return clean(uuid.split('-')[0] ?? uuid, 12);
}

/** "12s ago", "5m ago", "in 3s": relative to this machine's clock. */
export function age(iso: string | null, now: number): string {
  if (iso === null) return '-';
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return clean(iso, 40);
  const ms = now - at;
  const span = humanSpan(Math.abs(ms));
  // Clock skew between this machine and the database makes a just-written time look a few
  // hundred ms in the future; calling that "in 0s" would be misleading.
  if (ms >= -1_000) return `${span} ago`;
  return `in ${span}`;
}

function humanSpan(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h`;
  return `${Math.floor(hours / 24)}d`;
}

/** Second precision, UTC: enough to line up with logs and the provider's dashboard. */
export function timestamp(iso: string | null): string {
  if (iso === null) return '-';
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return clean(iso, 40);
  return `${at.toISOString().slice(0, 19)}Z`;
}
