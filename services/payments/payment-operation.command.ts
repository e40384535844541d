import { z } from 'zod';
import type { JsonValue } from '../../lib/canonical-json.ts';
import { AppError, LIB_ERRORS } from '../../lib/errors.ts';
import { assertIdempotencyKey } from '../../lib/idempotency/idempotency-key.ts';
import { assertEncodableText, assertFreeText } from '../../lib/input/free-text.ts';
import { refuseCardNumbers } from './card-number-screen.ts';

const REASON_MAX_CHARS = 255;

/**
 * The validated, normalised command of a capture, refund or cancel: what the request hash
 * covers. Equivalent inputs give equal commands ("10.50" and "10.5", a payment id in any case).
 */
export interface OperationCommand {
  [field: string]: JsonValue;
  paymentId: string;
  /** Canonical decimal ("10.5" for "10.50"), or null for "all of it". */
  amount: string | null;
  reason: string | null;
}

/** capture, refund and cancel as a caller sends them (GraphQL input or an internal tRPC call). */
export const operationInput = z.strictObject({
  tenantId: z.uuid(),
  idempotencyKey: z.string(),
  paymentId: z.string(),
  amount: z.string().nullish(),
  reason: z.string().nullish(),
});
export type OperationInput = z.infer<typeof operationInput>;

/** Throws IdempotencyKeyInvalidError or AppError (BAD_USER_INPUT) on bad input. */
export function normaliseOperation(input: OperationInput): OperationCommand {
  assertIdempotencyKey(input.idempotencyKey);
  const reason = input.reason ?? null;
  if (reason !== null && (reason.length === 0 || reason.length > REASON_MAX_CHARS)) {
    throw new AppError(LIB_ERRORS.BAD_USER_INPUT, {
      message: `reason must be 1 to ${REASON_MAX_CHARS} characters`,
      details: { field: 'reason' },
    });
  }
  assertFreeText('reason', reason, refuseCardNumbers);
  assertEncodableText('paymentId', input.paymentId);
  const raw = input.amount ?? null;
  if (raw === null) return { paymentId: input.paymentId.toLowerCase(), amount: null, reason };
  const match = /^(\d{1,18})(?:\.(\d{1,4}))?$/.exec(raw.trim());
  if (!match) {
    throw new AppError(LIB_ERRORS.BAD_USER_INPUT, {
      message: 'amount must be a decimal string such as "10.50"',
      details: { field: 'amount' },
    });
  }
  const whole = BigInt(match[1] ?? '0').toString();
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  return {
    paymentId: input.paymentId.toLowerCase(),
    amount: fraction === '' ? whole : `${whole}.${fraction}`,
    reason,
  };
}
