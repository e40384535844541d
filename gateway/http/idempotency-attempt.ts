/**
 * `Idempotency-Attempt: n`: which send of one logical call a request is, as the client SDK
 * numbers them (1 for the first). The gateway only logs it, beside the request id, so a request
 * line says whether it was a retry; it changes nothing about how the request is served.
 *
 * The value is the client's, so only a small positive integer is logged: anything else (text,
 * zero, a huge number, a repeated header) is ignored rather than written into the logs.
 */

/** Far above any client's attempts (the SDK's default is 6); a larger value is not a count. */
export const MAX_LOGGED_ATTEMPT = 1_000;

const DIGITS = /^[1-9][0-9]{0,3}$/;

/** The attempt number a request carries, or undefined when it carries none worth logging. */
export function idempotencyAttemptOf(header: string | string[] | undefined): number | undefined {
  if (typeof header !== 'string' || !DIGITS.test(header)) return undefined;
  const attempt = Number(header);
  return attempt <= MAX_LOGGED_ATTEMPT ? attempt : undefined;
}
