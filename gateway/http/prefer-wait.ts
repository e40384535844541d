/**
 * `Prefer: wait=N` (RFC 7240): how long a client will wait for a request whose key is in
 * flight, instead of a 409 it must retry. Capped so that a wait never outlasts what the first
 * request can take before it answers (a provider call and a probe), nor 10 s (docs/api.md §1).
 */
export const KEY_WAIT_MAX_SECONDS = 10;

/** The longest wait a request may have: the first request's longest exchange, at most 10 s. */
export function keyWaitCapMs(providerTimeoutMs: number): number {
  return Math.min(KEY_WAIT_MAX_SECONDS * 1_000, 2 * providerTimeoutMs);
}

/** delta-seconds as RFC 7240 writes it; a longer number is refused rather than parsed. */
const WAIT_PREFERENCE = /^\s*wait\s*=\s*(?:(\d{1,9})|"(\d{1,9})")\s*$/i;
const ANY_WAIT_PREFERENCE = /^\s*wait\s*(?:=|$)/i;

/**
 * The wait a request prefers, in seconds, or null when it states none. Preferences are
 * comma-separated (several Prefer headers arrive joined by commas), each with optional
 * `;parameters`; names are case-insensitive; the first `wait` counts, and a malformed one is
 * ignored as RFC 7240 asks of a preference a server does not understand.
 */
export function preferredWaitSeconds(header: string | string[] | undefined): number | null {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value === undefined) return null;
  for (const preference of value.split(',')) {
    const nameAndValue = preference.split(';', 1)[0] ?? '';
    const match = WAIT_PREFERENCE.exec(nameAndValue);
    if (match !== null) return Number(match[1] ?? match[2]);
    if (ANY_WAIT_PREFERENCE.test(nameAndValue)) return null;
  }
  return null;
}

/**
 * The wait a request granted at the edge, as it travels to a service in another process
 * (app/payments-over-http.ts): whole milliseconds, the edge's cap already applied.
 */
export const KEY_WAIT_HEADER = 'x-key-wait-ms';

/**
 * The wait a call over the hop carries, in ms: 0 when it carries none or a malformed one, and
 * never past this process's own cap (a caller's setting is not this process's promise).
 */
export function hopKeyWaitMs(header: string | string[] | undefined, capMs: number): number {
  if (typeof header !== 'string' || !/^\d{1,9}$/.test(header)) return 0;
  return Math.min(Number(header), capMs);
}
