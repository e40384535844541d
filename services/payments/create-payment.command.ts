import { z } from 'zod';
import { canonicalJson, isJsonValue, type JsonValue } from '../../lib/canonical-json.ts';
import { InputInvalidError } from '../../lib/errors.ts';
import { assertFreeJson, assertFreeText } from '../../lib/input/free-text.ts';
import { refuseCardNumbers } from './card-number-screen.ts';
import { assertIdempotencyKey } from '../../lib/idempotency/idempotency-key.ts';
import { normaliseCurrency, parseAmount } from '../../lib/money/money.ts';

const PAYMENT_METHOD_PATTERN = /^pm_[A-Za-z0-9_]{1,100}$/;
const DESCRIPTION_MAX_CHARS = 1_000;
const REFERENCE_MAX_CHARS = 255;
const METADATA_MAX_BYTES = 8 * 1024;

/** createPayment as a caller sends it (GraphQL input or an internal tRPC call). */
export const createPaymentInput = z.strictObject({
  tenantId: z.uuid(),
  idempotencyKey: z.string(),
  amount: z.string(),
  currency: z.string(),
  paymentMethod: z.string(),
  captureMethod: z.enum(['AUTOMATIC', 'MANUAL']).nullish(),
  reference: z.string().nullish(),
  description: z.string().nullish(),
  metadata: z.unknown().optional(),
});
export type CreatePaymentInput = z.infer<typeof createPaymentInput>;

/**
 * The validated, normalised command: what the request hash covers and what the payment is
 * made from. Equivalent inputs give equal commands ("10.5" and "10.50" EUR, "eur" and "EUR",
 * metadata in any key order, an omitted captureMethod and AUTOMATIC).
 */
export interface CreatePaymentCommand {
  [field: string]: JsonValue;
  amountMinor: string;
  currency: string;
  paymentMethod: string;
  captureMethod: 'AUTOMATIC' | 'MANUAL';
  reference: string | null;
  description: string | null;
  metadata: JsonValue;
}

/** Throws IdempotencyKeyInvalidError or InputInvalidError (BAD_USER_INPUT) on bad input. */
export function normaliseCreatePayment(input: CreatePaymentInput): {
  key: string;
  command: CreatePaymentCommand;
} {
  assertIdempotencyKey(input.idempotencyKey);
  const currency = normaliseCurrency(input.currency);
  if (currency === null)
    throw new InputInvalidError('currency', 'currency must be an active ISO 4217 code');
  const amount = parseAmount(input.amount.trim(), currency);
  if (!amount.ok) throw new InputInvalidError('amount', amountMessage(amount.error, currency));
  if (!PAYMENT_METHOD_PATTERN.test(input.paymentMethod)) {
    throw new InputInvalidError(
      'paymentMethod',
      'paymentMethod must be pm_ followed by 1 to 100 of [A-Za-z0-9_]',
    );
  }
  assertFreeText('paymentMethod', input.paymentMethod, refuseCardNumbers);
  assertFreeText('reference', input.reference, refuseCardNumbers);
  assertFreeText('description', input.description, refuseCardNumbers);
  const reference = input.reference ?? null;
  if (reference !== null && (reference.length === 0 || reference.length > REFERENCE_MAX_CHARS)) {
    throw new InputInvalidError(
      'reference',
      `reference must be 1 to ${REFERENCE_MAX_CHARS} characters`,
    );
  }
  const description = input.description ?? null;
  if (description !== null && description.length > DESCRIPTION_MAX_CHARS) {
    throw new InputInvalidError(
      'description',
      `description must be at most ${DESCRIPTION_MAX_CHARS} characters`,
    );
  }
  return {
    key: input.idempotencyKey,
    command: {
      amountMinor: amount.minor.toString(),
      currency,
      paymentMethod: input.paymentMethod,
      captureMethod: input.captureMethod ?? 'AUTOMATIC',
      reference,
      description,
      metadata: normaliseMetadata(input.metadata),
    },
  };
}

function normaliseMetadata(raw: unknown): JsonValue {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'object' || Array.isArray(raw) || !isJsonValue(raw)) {
    throw new InputInvalidError('metadata', 'metadata must be a JSON object');
  }
  if (Buffer.byteLength(canonicalJson(raw)) > METADATA_MAX_BYTES) {
    throw new InputInvalidError(
      'metadata',
      `metadata must be at most ${METADATA_MAX_BYTES} bytes of JSON`,
    );
  }
  assertFreeJson('metadata', raw, refuseCardNumbers);
  return raw;
}

function amountMessage(error: string, currency: string): string {
  switch (error) {
    case 'AMOUNT_SCALE':
      return `amount has more decimals than ${currency} allows`;
    case 'AMOUNT_NOT_POSITIVE':
      return 'amount must be greater than zero';
    case 'AMOUNT_TOO_LARGE':
      return 'amount is too large';
    default:
      return 'amount must be a decimal string such as "10.50"';
  }
}
