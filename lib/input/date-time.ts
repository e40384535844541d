/**
 * RFC 3339 date-times (section 5.6) as the API takes them: a full date, `T`, a time, an optional
 * fraction and a zone (`Z` or ±hh:mm), each part in range and the date a real one. A shape check
 * alone let `2026-02-30T00:00:00Z` and year 0000 through to PostgreSQL, which refused them with
 * an error that surfaced as a 500; JavaScript's Date.parse rolls Feb 30 over to March instead,
 * so it cannot be the check either.
 */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(?:Z|([+-])(\d{2}):(\d{2}))$/i;

/**
 * Years a DateTime may name, at its own offset and in UTC: RFC 3339's four digits without year
 * 0000, which ISO 8601 reads as 1 BC and PostgreSQL refuses. Keeping the UTC instant within them
 * too lets every DateTime be written back in the same four-digit form.
 */
const MIN_YEAR = 1;
const MAX_YEAR = 9999;
/**
 * A UTC offset's hours: RFC 3339's time-hour, 00–23. PostgreSQL refuses offsets beyond ±15:59,
 * which is why a DateTime reaches it as UTC (see parseDateTime).
 */
const MAX_OFFSET_HOURS = 23;
const MINUTES_PER_HOUR = 60;
const MS_PER_MINUTE = 60_000;

const SHAPE_PROBLEM =
  'must be an RFC 3339 date and time with a zone, such as 2026-02-14T10:20:30Z, ' +
  'with at most six decimals of a second';

export type DateTimeParse =
  | {
      ok: true;
      /** The same instant in UTC, `YYYY-MM-DDThh:mm:ss[.ffffff]Z`: what PostgreSQL is given. */
      utc: string;
    }
  | {
      ok: false;
      /** Why, as a phrase that follows the field's name ("must be …"). */
      problem: string;
    };

/**
 * A client's date-time, checked whole, or why not. The calendar check is a round trip: the
 * parts are set on a Date and must come back unchanged, which refuses month 13, Feb 29 outside
 * leap years, Feb 30, hour 24 and minute 60. Second 60 is refused too: RFC 3339 allows a leap
 * second, but PostgreSQL reads 23:59:60 as the next minute and JavaScript not at all, so the
 * instant stored would not be the one sent. The result is in UTC because PostgreSQL refuses
 * offsets that RFC 3339 allows (+16:00 to +23:59).
 */
export function parseDateTime(text: string): DateTimeParse {
  const match = DATE_TIME.exec(text);
  if (match === null) return { ok: false, problem: SHAPE_PROBLEM };
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const [fraction, sign, offsetHours, offsetMinutes] = match.slice(7);
  if (year < MIN_YEAR || year > MAX_YEAR)
    return { ok: false, problem: 'must name a year from 0001 to 9999' };
  const local = new Date(0);
  local.setUTCFullYear(year, month - 1, day);
  local.setUTCHours(hour, minute, second, 0);
  const roundTrips =
    local.getUTCFullYear() === year &&
    local.getUTCMonth() === month - 1 &&
    local.getUTCDate() === day &&
    local.getUTCHours() === hour &&
    local.getUTCMinutes() === minute &&
    local.getUTCSeconds() === second;
  if (!roundTrips) return { ok: false, problem: 'must name a date and time that exist' };
  const [hours, minutes] = [Number(offsetHours ?? 0), Number(offsetMinutes ?? 0)];
  if (hours > MAX_OFFSET_HOURS || minutes >= MINUTES_PER_HOUR)
    return { ok: false, problem: 'must have a UTC offset from -23:59 to +23:59' };
  const east = (sign === '-' ? -1 : 1) * (hours * MINUTES_PER_HOUR + minutes);
  const utc = new Date(local.getTime() - east * MS_PER_MINUTE);
  if (utc.getUTCFullYear() < MIN_YEAR || utc.getUTCFullYear() > MAX_YEAR)
    return { ok: false, problem: 'must name an instant from year 0001 to 9999 in UTC' };
  const seconds = utc.toISOString().slice(0, 19);
  return { ok: true, utc: `${seconds}${fraction === undefined ? '' : `.${fraction}`}Z` };
}
