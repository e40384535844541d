import { describe, expect, it } from 'vitest';
import { composeErrorCatalog, defineErrors } from '../lib/errors.ts';
import { ERROR_CATALOG } from './error-catalog.ts';

describe('the error catalog composed from its parts', () => {
  it('holds every code of the public contract, each with its status and storage', () => {
    expect(
      Object.fromEntries(
        Object.values(ERROR_CATALOG).map((spec) => [spec.code, [spec.httpStatus, spec.stored]]),
      ),
    ).toEqual({
      UNAUTHENTICATED: [401, false],
      BAD_USER_INPUT: [400, false],
      GRAPHQL_VALIDATION_FAILED: [400, false],
      PAYLOAD_TOO_LARGE: [413, false],
      IDEMPOTENCY_KEY_INVALID: [400, false],
      IDEMPOTENCY_KEY_REUSED: [422, false],
      IDEMPOTENCY_KEY_IN_USE: [409, false],
      OUTCOME_PENDING: [202, false],
      PROVIDER_UNAVAILABLE: [503, false],
      DUPLICATE_REFERENCE: [409, false],
      REQUEST_ALREADY_APPLIED: [409, false],
      PAYMENT_NOT_FOUND: [404, true],
      INVALID_PAYMENT_STATE: [422, true],
      AMOUNT_EXCEEDS_CAPTURABLE: [422, true],
      AMOUNT_EXCEEDS_REFUNDABLE: [422, true],
      RATE_LIMITED: [429, false],
      WEBHOOK_URL_NOT_ALLOWED: [400, false],
      WEBHOOK_ENDPOINT_LIMIT_REACHED: [422, true],
      WEBHOOK_ENDPOINT_NOT_FOUND: [404, true],
      WEBHOOK_ENDPOINT_DISABLED: [422, true],
      WEBHOOK_DELIVERY_NOT_FOUND: [404, true],
      INTERNAL_SERVER_ERROR: [500, false],
      DATABASE_UNAVAILABLE: [503, false],
      TENANT_READS_BUSY: [429, false],
      SERVICE_UNAVAILABLE: [503, false],
    });
  });

  it('keys each spec by its own code', () => {
    for (const [code, spec] of Object.entries(ERROR_CATALOG)) expect(spec.code).toBe(code);
  });

  it('refuses a code that two parts define', () => {
    const first = defineErrors({ SAME: { httpStatus: 400, stored: false, message: 'one' } });
    const second = defineErrors({ SAME: { httpStatus: 409, stored: true, message: 'two' } });
    expect(() => composeErrorCatalog(first, second)).toThrow('error code SAME is defined twice');
  });
});
