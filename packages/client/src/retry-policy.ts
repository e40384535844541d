/**
 * Which failures the SDK sends again. A mutation is retried whenever its outcome is not final:
 * every attempt carries the same idempotency key, so the gateway runs it at most once and
 * answers a retry with the stored result. A read has no key and nothing to wait for: it is
 * retried only when the answer was lost or the gateway could not serve it.
 */
export type CallKind = 'mutation' | 'read';

/**
 * Final answers, never sent again whatever the HTTP status says: a business refusal is stored
 * for the key and replayed, and IDEMPOTENCY_KEY_REUSED means the key already names another
 * request — retrying it can only repeat the refusal.
 */
const NEVER_RETRIED: ReadonlySet<string> = new Set([
  'UNAUTHENTICATED',
  'GRAPHQL_VALIDATION_FAILED',
  'GRAPHQL_PARSE_FAILED',
  'BAD_REQUEST',
  'PAYLOAD_TOO_LARGE',
  'BAD_USER_INPUT',
  'IDEMPOTENCY_KEY_INVALID',
  'IDEMPOTENCY_KEY_REUSED',
  'PAYMENT_NOT_FOUND',
  'INVALID_PAYMENT_STATE',
  'AMOUNT_EXCEEDS_CAPTURABLE',
  'AMOUNT_EXCEEDS_REFUNDABLE',
  'WEBHOOK_URL_NOT_ALLOWED',
  'WEBHOOK_ENDPOINT_LIMIT_REACHED',
  'WEBHOOK_ENDPOINT_NOT_FOUND',
  'WEBHOOK_ENDPOINT_DISABLED',
  'WEBHOOK_DELIVERY_NOT_FOUND',
  // Not stored, but final for this key: another payment holds the reference, or the request
  // was already carried out (see extensions.paymentId).
  'DUPLICATE_REFERENCE',
  'REQUEST_ALREADY_APPLIED',
  'ABORTED',
  'INVALID_REQUEST',
  'KEY_STORE_FAILED',
]);

/** Lost answers and refusals that say "not now": the same request may be sent again. */
const RETRIED_FOR_READS: ReadonlySet<string> = new Set([
  'NETWORK_ERROR',
  'TIMEOUT',
  'RATE_LIMITED',
  'INTERNAL_SERVER_ERROR',
  'DATABASE_UNAVAILABLE',
  'SERVICE_UNAVAILABLE',
]);

/** As reads, plus the answers that say the keyed request is not final yet (docs/api.md §3.1). */
const RETRIED_FOR_MUTATIONS: ReadonlySet<string> = new Set([
  ...RETRIED_FOR_READS,
  'IDEMPOTENCY_KEY_IN_USE',
  'OUTCOME_PENDING',
  'PROVIDER_UNAVAILABLE',
]);

/** Whether a failed attempt of a `kind` call is sent again (time and attempts allowing). */
export function isRetryable(failure: {
  kind: CallKind;
  code: string;
  httpStatus: number | null;
}): boolean {
  if (NEVER_RETRIED.has(failure.code)) return false;
  const retried = failure.kind === 'mutation' ? RETRIED_FOR_MUTATIONS : RETRIED_FOR_READS;
  if (retried.has(failure.code)) return true;
  // A 5xx or 429 without a known code (a proxy's 502, a load balancer's limit) did not serve
  // the request. A 408 says the server never received the whole request (RFC 9110 §15.5.9), so
  // did nothing with it; it may also be a server's close of a pooled connection, read as the
  // answer to the request written into it.
  const status = failure.httpStatus;
  return status !== null && (status >= 500 || status === 429 || status === 408);
}
