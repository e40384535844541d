import { describe, expect, it } from 'vitest';
import { isRetryable } from '../../packages/client/src/retry-policy.ts';

/** Final answers: a business refusal is stored for the key, a reused key names another request. */
const NEVER = [
  ['PAYMENT_NOT_FOUND', 404],
  ['INVALID_PAYMENT_STATE', 422],
  ['AMOUNT_EXCEEDS_CAPTURABLE', 422],
  ['AMOUNT_EXCEEDS_REFUNDABLE', 422],
  ['BAD_USER_INPUT', 400],
  ['WEBHOOK_URL_NOT_ALLOWED', 400],
  ['WEBHOOK_ENDPOINT_LIMIT_REACHED', 422],
  ['WEBHOOK_ENDPOINT_NOT_FOUND', 404],
  ['WEBHOOK_ENDPOINT_DISABLED', 422],
  ['WEBHOOK_DELIVERY_NOT_FOUND', 404],
  ['DUPLICATE_REFERENCE', 409],
  ['REQUEST_ALREADY_APPLIED', 409],
  ['UNAUTHENTICATED', 401],
  ['IDEMPOTENCY_KEY_REUSED', 422],
  ['IDEMPOTENCY_KEY_INVALID', 400],
  ['GRAPHQL_VALIDATION_FAILED', 400],
  ['GRAPHQL_PARSE_FAILED', 400],
  ['PAYLOAD_TOO_LARGE', 413],
  ['ABORTED', null],
  // A business code is final even if a proxy in between turned its status into a 5xx.
  ['IDEMPOTENCY_KEY_REUSED', 502],
  ['WEBHOOK_ENDPOINT_NOT_FOUND', 502],
] as const;

/** The outcome is not final yet: the keyed mutation is sent again. */
const MUTATIONS_ONLY = [
  ['IDEMPOTENCY_KEY_IN_USE', 409],
  ['OUTCOME_PENDING', 202],
] as const;

/** Lost or unserved: reads and mutations alike. */
const BOTH = [
  ['NETWORK_ERROR', null],
  ['TIMEOUT', null],
  ['RATE_LIMITED', 429],
  ['INTERNAL_SERVER_ERROR', 500],
  ['PROVIDER_UNAVAILABLE', 503],
  ['BAD_RESPONSE', 502],
  ['BAD_RESPONSE', 429],
  // A request timeout at the server: the request was not received whole, so not acted on.
  ['BAD_RESPONSE', 408],
] as const;

describe('the retry policy', () => {
  it.each(NEVER)('never retries %s (HTTP %s)', (code, httpStatus) => {
    expect(isRetryable({ kind: 'mutation', code, httpStatus })).toBe(false);
    expect(isRetryable({ kind: 'read', code, httpStatus })).toBe(false);
  });

  it.each(MUTATIONS_ONLY)('retries %s (HTTP %s) for a mutation only', (code, httpStatus) => {
    expect(isRetryable({ kind: 'mutation', code, httpStatus })).toBe(true);
    expect(isRetryable({ kind: 'read', code, httpStatus })).toBe(false);
  });

  it.each(BOTH)('retries %s (HTTP %s) for reads and mutations', (code, httpStatus) => {
    expect(isRetryable({ kind: 'mutation', code, httpStatus })).toBe(true);
    expect(isRetryable({ kind: 'read', code, httpStatus })).toBe(true);
  });

  it('does not retry an answer it cannot read that came with a 2xx or 4xx', () => {
    for (const httpStatus of [200, 400, 404]) {
      expect(isRetryable({ kind: 'mutation', code: 'BAD_RESPONSE', httpStatus })).toBe(false);
    }
  });
});
