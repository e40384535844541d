/**
 * How long to wait before the next attempt: exponential backoff with full jitter (a uniform
 * draw below a ceiling that doubles per attempt), so clients that failed together do not retry
 * together; never less than what the gateway asked for in Retry-After.
 */
export interface BackoffOptions {
  /** The first retry's ceiling. */
  baseMs: number;
  /** No ceiling grows past this. */
  capMs: number;
}

/** Past this many doublings the ceiling is the cap anyway; stops 2 ** n overflowing. */
const MAX_DOUBLINGS = 30;

/** Full jitter after failed attempt `attempt` (1-based): uniform in [0, min(cap, base·2^(attempt−1))]. */
export function backoffDelayMs(input: {
  attempt: number;
  backoff: BackoffOptions;
  random: () => number;
}): number {
  const { attempt, backoff } = input;
  const doublings = Math.min(Math.max(attempt - 1, 0), MAX_DOUBLINGS);
  const ceiling = Math.min(backoff.capMs, backoff.baseMs * 2 ** doublings);
  // A random source out of [0, 1) (1, a negative, NaN) must not push the draw out of range.
  const value = input.random();
  const draw = Number.isFinite(value) ? Math.min(Math.max(value, 0), 1) : 0;
  return Math.floor(draw * ceiling);
}

/** The wait before the next attempt: the jittered backoff, or Retry-After if that is longer. */
export function retryDelayMs(input: {
  attempt: number;
  backoff: BackoffOptions;
  random: () => number;
  retryAfterMs: number | undefined;
}): number {
  return Math.max(input.retryAfterMs ?? 0, backoffDelayMs(input));
}

/**
 * What an answer asked to wait, in ms: the Retry-After header (delta-seconds, or an HTTP date a
 * proxy may send), else `extensions.retryAfterSeconds`. Undefined when neither is usable.
 */
export function retryAfterMsOf(input: {
  header: string | null;
  extensionSeconds: unknown;
  nowMs: number;
}): number | undefined {
  const header = input.header?.trim();
  if (header !== undefined && header !== '') {
    if (/^\d+$/.test(header)) return Number(header) * 1000;
    // HTTP dates start with the day's name; Date.parse alone would take "-1" for a year.
    const date = /^[A-Za-z]{3}/.test(header) ? Date.parse(header) : Number.NaN;
    if (Number.isFinite(date)) return Math.max(0, date - input.nowMs);
  }
  const seconds = input.extensionSeconds;
  if (typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0)
    return seconds * 1000;
  return undefined;
}
