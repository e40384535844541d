import { timingSafeEqual, createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * The longest bearer token looked up. Our keys are far shorter; a longer token cannot be one,
 * and the tenants service refuses such input, which must stay a 401 and not become a 500.
 */
export const MAX_BEARER_TOKEN_CHARS = 512;
/** RFC 6750's b64token: any other character means the token cannot be one we issued. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * The bearer token of a request, or null when there is none or it cannot be a credential of
 * ours (too long, or outside RFC 6750's alphabet). Either way the caller answers 401.
 */
export function bearerToken(headers: IncomingHttpHeaders): string | null {
  const header = headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer +(\S+) *$/i.exec(header);
  const token = match?.[1];
  return token !== undefined && isBearerTokenShape(token) ? token : null;
}

/** Whether a string can be sent as a bearer token at all (a configured key must). */
export function isBearerTokenShape(token: string): boolean {
  return token.length <= MAX_BEARER_TOKEN_CHARS && B64TOKEN.test(token);
}

/** Compares secrets in constant time (over their hashes, so lengths leak nothing either). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}
