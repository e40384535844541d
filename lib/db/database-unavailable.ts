import { LIB_ERRORS, publicError, type PublicError } from '../errors.ts';
import { isPrimaryLost } from './primary-finder.ts';

/** How soon a client may retry: a failover takes seconds, and the finder asks a few times a second. */
const RETRY_AFTER_SECONDS = 1;

/**
 * DATABASE_UNAVAILABLE for a failure that says the database could not be reached or is failing
 * over (isPrimaryLost: a terminated or refused connection, a demoted primary, no primary found
 * in time, a connection whose answer never came). Nothing of the request is stored; the same
 * key retried runs it, or resumes what was admitted. Any other failure stays masked as
 * INTERNAL_SERVER_ERROR.
 */
export function databaseUnavailable(error: unknown): PublicError | null {
  return isPrimaryLost(error)
    ? publicError(LIB_ERRORS.DATABASE_UNAVAILABLE, { retryAfterSeconds: RETRY_AFTER_SECONDS })
    : null;
}
