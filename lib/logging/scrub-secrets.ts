/**
 * Field names that may carry a secret or a client's raw key, compared without case, wherever
 * they appear in a log object. Log code names what it logs deliberately (keyRef, tenantId), so
 * this is the safety net for a whole input, headers or request object logged by mistake.
 */
const SECRET_FIELDS: ReadonlySet<string> = new Set([
  'apikey',
  'authorization',
  'idempotencykey',
  'paymentmethod',
  'secret',
]);

export const REDACTED = '[redacted]';

/** Nesting below this is not walked but replaced (which also stops a cycle). */
const MAX_DEPTH = 6;
export const TOO_DEEP = '[too deep to scrub]';

/**
 * `fields` with the value of every secret field, at any depth, replaced by REDACTED.
 *
 * Copy on write: an object with nothing to censor comes back as itself, so a flat log line
 * costs one look at each of its keys, and the caller's objects are never changed. pino's own
 * `redact` option did the same job for the paths it was given, but it runs every value of
 * every line through a clone and a `JSON.stringify` of its own (see
 * docs/decisions/0015-log-scrub-copy-on-write.md).
 *
 * Errors are left to pino's error serializer: copying one would lose its message and stack,
 * which are not enumerable. Nothing here logs an error that carries a secret field.
 */
export function scrubSecrets(fields: Record<string, unknown>): Record<string, unknown> {
  return scrubObject(fields, 0);
}

function scrubObject(source: Record<string, unknown>, depth: number): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const key in source) {
    if (!Object.hasOwn(source, key)) continue;
    const value = source[key];
    const scrubbed = SECRET_FIELDS.has(key.toLowerCase()) ? REDACTED : scrubValue(value, depth);
    if (scrubbed !== value) {
      copy ??= { ...source };
      copy[key] = scrubbed;
    }
  }
  return copy ?? source;
}

function scrubValue(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null || value instanceof Error) return value;
  if (depth + 1 >= MAX_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) {
    const items: readonly unknown[] = value;
    let copy: unknown[] | undefined;
    items.forEach((item, index) => {
      const scrubbed = scrubValue(item, depth + 1);
      if (scrubbed !== item) {
        copy ??= [...items];
        copy[index] = scrubbed;
      }
    });
    return copy ?? value;
  }
  // A Date or Buffer says itself what goes into the line; JSON sees any other object (a
  // class instance too) as its own enumerable fields, which are walked like a plain object's.
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
  return scrubObject(value as Record<string, unknown>, depth + 1);
}
