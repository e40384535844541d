// Validates the from/to query parameters of GET /v1/statement. Only full ISO-8601 instants
// with a zone are accepted: reconciliation cuts periods on these values, and Date.parse alone
// would quietly read a zoneless time as local time or roll "2024-02-30" over into March.
import type { Parsed } from './charge-request-parser.ts';

/** 2024-01-31T23:59:59.999Z or 2024-01-31T23:59:59+01:00; seconds and fraction optional. */
const ISO_INSTANT_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/;

export interface StatementRange {
  fromMs: number;
  toMs: number;
}

function daysInMonth(year: number, month: number): number {
  // Day 0 of the next month is the last day of this one.
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function parseInstant(name: string, raw: string | null): Parsed<number> {
  const invalid = { ok: false as const, message: `${name} must be an ISO-8601 instant with zone` };
  const match = raw === null ? null : ISO_INSTANT_PATTERN.exec(raw);
  if (raw === null || match === null) return invalid;
  const [year, month, day] = [match[1], match[2], match[3]].map(Number) as [number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return invalid;
  const ms = Date.parse(raw);
  return Number.isNaN(ms) ? invalid : { ok: true, value: ms };
}

/** [from, to): from is inclusive, to exclusive, so adjacent periods never share a charge. */
export function parseStatementRange(query: URLSearchParams): Parsed<StatementRange> {
  const from = parseInstant('from', query.get('from'));
  if (!from.ok) return from;
  const to = parseInstant('to', query.get('to'));
  if (!to.ok) return to;
  if (from.value > to.value) return { ok: false, message: 'from must not be after to' };
  return { ok: true, value: { fromMs: from.value, toMs: to.value } };
}
