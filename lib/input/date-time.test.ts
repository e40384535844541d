import { describe, expect, it } from 'vitest';
import { parseDateTime } from './date-time.ts';

describe('RFC 3339 date-times, checked whole', () => {
  it.each([
    ['UTC', '2026-02-14T10:20:30Z', '2026-02-14T10:20:30Z'],
    [
      'lower-case t and z, and microseconds',
      '2026-02-14t10:20:30.123456z',
      '2026-02-14T10:20:30.123456Z',
    ],
    ['Feb 29 in a leap year', '2024-02-29T00:00:00Z', '2024-02-29T00:00:00Z'],
    ['a negative offset', '2026-01-01T00:00:00-05:30', '2026-01-01T05:30:00Z'],
    ['an offset PostgreSQL refuses', '2026-01-01T00:00:00+23:59', '2025-12-31T00:01:00Z'],
    ['-00:00', '2026-01-01T00:00:00-00:00', '2026-01-01T00:00:00Z'],
    ['year 0001', '0001-01-01T00:00:00Z', '0001-01-01T00:00:00Z'],
    ['year 9999', '9999-12-31T23:59:59.999999Z', '9999-12-31T23:59:59.999999Z'],
  ])('takes %s, as the same instant in UTC', (_, text, utc) => {
    expect(parseDateTime(text)).toEqual({ ok: true, utc });
  });

  it.each([
    ['Feb 30', '2026-02-30T00:00:00Z', /exist/],
    ['Feb 29 outside a leap year', '2100-02-29T00:00:00Z', /exist/],
    ['month 00', '2026-00-10T00:00:00Z', /exist/],
    ['month 13', '2026-13-01T00:00:00Z', /exist/],
    ['day 00', '2026-01-00T00:00:00Z', /exist/],
    ['hour 24', '2026-01-01T24:00:00Z', /exist/],
    ['minute 60', '2026-01-01T00:60:00Z', /exist/],
    ['a leap second', '2016-12-31T23:59:60Z', /exist/],
    ['year 0000', '0000-01-01T00:00:00Z', /year from 0001 to 9999/],
    ['year 10000', '10000-01-01T00:00:00Z', /RFC 3339/],
    ['before year 0001 in UTC', '0001-01-01T00:00:00+00:01', /in UTC/],
    ['after year 9999 in UTC', '9999-12-31T23:59:59-00:01', /in UTC/],
    ['an offset of +24:00', '2026-01-01T00:00:00+24:00', /offset/],
    ['an offset of 60 minutes', '2026-01-01T00:00:00+01:60', /offset/],
    ['no zone', '2026-01-01T00:00:00', /RFC 3339/],
    ['a space for T', '2026-01-01 00:00:00Z', /RFC 3339/],
    ['seven decimals', '2026-01-01T00:00:00.1234567Z', /RFC 3339/],
    ['full-width digits', '２０２６-01-01T00:00:00Z', /RFC 3339/],
    ['a date alone', '2026-01-01', /RFC 3339/],
  ])('refuses %s', (_, text, problem) => {
    const parsed = parseDateTime(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problem).toMatch(problem);
  });
});
