import { defineErrors, LIB_ERRORS, publicError, type PublicError } from '../../lib/errors.ts';

/**
 * The payments service's codes. The business refusals are stored for the key and replayed;
 * the provider's two non-answers are not, because the same key must be able to go on.
 */
export const PAYMENT_ERRORS = defineErrors({
  OUTCOME_PENDING: {
    httpStatus: 202,
    stored: false,
    message: 'The provider has not confirmed the outcome yet. Retry with the same key.',
  },
  PROVIDER_UNAVAILABLE: {
    httpStatus: 503,
    stored: false,
    message: 'The payment provider is unavailable. Nothing was charged; retry with the same key.',
  },
  DUPLICATE_REFERENCE: {
    httpStatus: 409,
    stored: false,
    message:
      'A payment with this reference exists and is not failed or canceled (the reference guard is on). See extensions.paymentId.',
  },
  REQUEST_ALREADY_APPLIED: {
    httpStatus: 409,
    stored: false,
    message:
      'This request was already carried out, and its idempotency key is no longer on record (expired, or lost in a database failover). Nothing was done again; see extensions.paymentId.',
  },
  PAYMENT_NOT_FOUND: { httpStatus: 404, stored: true, message: 'No such payment.' },
  INVALID_PAYMENT_STATE: {
    httpStatus: 422,
    stored: true,
    message: 'The payment is not in a state that allows this operation.',
  },
  AMOUNT_EXCEEDS_CAPTURABLE: {
    httpStatus: 422,
    stored: true,
    message: 'The amount exceeds what can be captured.',
  },
  AMOUNT_EXCEEDS_REFUNDABLE: {
    httpStatus: 422,
    stored: true,
    message: 'The amount exceeds what can be refunded.',
  },
});

/** A business refusal: decided under the payment's lock, stored for the key. */
export type PaymentRefusal = (typeof PAYMENT_ERRORS)[
  | 'PAYMENT_NOT_FOUND'
  | 'INVALID_PAYMENT_STATE'
  | 'AMOUNT_EXCEEDS_CAPTURABLE'
  | 'AMOUNT_EXCEEDS_REFUNDABLE'];

/** The details a not-stored answer carries: when to retry, and the payment when it exists. */
function retryDetails(retryAfterSeconds: number, paymentId: string | null) {
  return paymentId === null ? { retryAfterSeconds } : { retryAfterSeconds, paymentId };
}

/** OUTCOME_PENDING: the provider's outcome is not known yet; the key stays resumable. */
export function outcomePending(retryAfterSeconds: number, paymentId: string | null): PublicError {
  return publicError(PAYMENT_ERRORS.OUTCOME_PENDING, retryDetails(retryAfterSeconds, paymentId));
}

/** IDEMPOTENCY_KEY_IN_USE: another owner holds the request (or took it over from this one). */
export function keyInUse(retryAfterSeconds: number, paymentId: string | null): PublicError {
  return publicError(LIB_ERRORS.IDEMPOTENCY_KEY_IN_USE, retryDetails(retryAfterSeconds, paymentId));
}
