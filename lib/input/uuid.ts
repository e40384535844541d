/**
 * The one UUID check. PostgreSQL prints a uuid in lower case and `randomUUID` makes one, so
 * the lower-case spelling is canonical: an id this API issued is always in it, and an id a
 * caller sends in another case names the same row once lowered.
 */
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whether `value` is a UUID spelled as PostgreSQL prints it. */
export function isCanonicalUuid(value: string): boolean {
  return CANONICAL_UUID.test(value);
}

/** `raw` as PostgreSQL prints it, or null when it is no UUID (so it names no row). */
export function canonicalUuid(raw: string): string | null {
  const lowered = raw.toLowerCase();
  return CANONICAL_UUID.test(lowered) ? lowered : null;
}
