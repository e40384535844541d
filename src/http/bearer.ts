import { timingSafeEqual, createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export function bearerToken(headers: IncomingHttpHeaders): string | null {
  const header = headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

/** Compares secrets in constant time (over their hashes, so lengths leak nothing either). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}
