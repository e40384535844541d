import { LIB_ERRORS, publicError, type PublicError } from '../errors.ts';

/**
 * The answer to a request whose key admission did not give it: the key was used for another
 * command (IDEMPOTENCY_KEY_REUSED), or its first request is still in flight
 * (IDEMPOTENCY_KEY_IN_USE with its Retry-After). Neither is stored: the key stays the first
 * request's, and a retry of the same command gets that request's answer.
 */
export function notAdmitted(
  admission: { kind: 'reused' } | { kind: 'in_use' | 'unknown'; retryAfterSeconds: number },
): { ok: false; error: PublicError; replayed: false } {
  const error =
    admission.kind === 'reused'
      ? publicError(LIB_ERRORS.IDEMPOTENCY_KEY_REUSED)
      : publicError(LIB_ERRORS.IDEMPOTENCY_KEY_IN_USE, {
          retryAfterSeconds: admission.retryAfterSeconds,
        });
  return { ok: false, error, replayed: false };
}
