// Validates POST /v1/charges input. Anything rejected here must leave no trace in the store,
// so parsing is pure and happens before the idempotency ledger is consulted.
import type { ChargeRequest } from './charge-types.ts';
import { isPositiveAmount } from './decimal-amount.ts';
import { PAYMENT_METHOD_PATTERN } from './payment-methods.ts';

/** Longest Idempotency-Key accepted; longer keys are rejected rather than truncated, since
 * truncation could silently merge two different payments onto one key. */
export const IDEMPOTENCY_KEY_MAX_CHARS = 255;
/** Longest merchant reference accepted, matching the gateway's column width. */
export const REFERENCE_MAX_CHARS = 255;

const CURRENCY_PATTERN = /^[A-Za-z]{3}$/;

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

export type KeyCheck = { ok: true; key: string } | { ok: false; missing: boolean; message: string };

/** Reads the Idempotency-Key header; an empty value counts as missing. */
export function readIdempotencyKey(header: string | string[] | undefined): KeyCheck {
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined || key === '') {
    return { ok: false, missing: true, message: 'Idempotency-Key header is required' };
  }
  if (key.length > IDEMPOTENCY_KEY_MAX_CHARS) {
    const message = `Idempotency-Key must be at most ${IDEMPOTENCY_KEY_MAX_CHARS} characters`;
    return { ok: false, missing: false, message };
  }
  return { ok: true, key };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks the body field by field and reports the first problem found. */
export function parseChargeRequest(body: unknown): Parsed<ChargeRequest> {
  if (!isRecord(body)) return { ok: false, message: 'body must be a JSON object' };
  const { amount, currency, paymentMethod, reference, capture } = body;
  if (!isPositiveAmount(amount)) {
    return { ok: false, message: 'amount must be a positive decimal string, e.g. "10.50"' };
  }
  if (typeof currency !== 'string' || !CURRENCY_PATTERN.test(currency)) {
    return { ok: false, message: 'currency must be a 3-letter code, e.g. "EUR"' };
  }
  if (typeof paymentMethod !== 'string' || !PAYMENT_METHOD_PATTERN.test(paymentMethod)) {
    return { ok: false, message: `paymentMethod must match ${PAYMENT_METHOD_PATTERN.source}` };
  }
  if (typeof reference !== 'string' || reference === '' || reference.length > REFERENCE_MAX_CHARS) {
    return { ok: false, message: `reference must be 1-${REFERENCE_MAX_CHARS} characters` };
  }
  if (typeof capture !== 'boolean') {
    return { ok: false, message: 'capture must be a boolean' };
  }
  // Currency is upper-cased so "eur" and "EUR" bind to the same key instead of tripping a mismatch.
  const value = { amount, currency: currency.toUpperCase(), paymentMethod, reference, capture };
  return { ok: true, value };
}
