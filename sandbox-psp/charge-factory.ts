// Builds the charge for an applied request (the store stamps createdAt when it records it).
// Zero amounts are written with the same number of decimals as the charged amount
// ("10.50" → "0.00", "7" → "0") so a client that compares strings sees a consistent scale
// within one charge.
import { randomBytes } from 'node:crypto';
import type { ChargeDraft, ChargeRequest } from './charge-types.ts';

/** Random bytes in a charge id: 96 bits makes a collision across a test run practically impossible. */
const CHARGE_ID_RANDOM_BYTES = 12;

export function zeroWithScaleOf(amount: string): string {
  const decimals = amount.split('.')[1]?.length ?? 0;
  return decimals === 0 ? '0' : `0.${'0'.repeat(decimals)}`;
}

export function buildCharge(input: {
  idempotencyKey: string;
  request: ChargeRequest;
  /** null for an approval; the decline code otherwise. */
  failureCode: string | null;
}): ChargeDraft {
  const { idempotencyKey, request, failureCode } = input;
  const zero = zeroWithScaleOf(request.amount);
  const approved = failureCode === null;
  const captured = approved && request.capture;
  return {
    id: `ch_${randomBytes(CHARGE_ID_RANDOM_BYTES).toString('hex')}`,
    amount: request.amount,
    currency: request.currency,
    status: !approved ? 'declined' : captured ? 'captured' : 'authorized',
    amountCaptured: captured ? request.amount : zero,
    amountRefunded: zero,
    reference: request.reference,
    idempotencyKey,
    failureCode,
    paymentMethod: request.paymentMethod,
  };
}
