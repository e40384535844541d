import { derivedKey } from '../kernel/idempotency/derived-key.ts';

/**
 * The idempotency key of a payment's charge at the provider: one per payment, the same on every
 * attempt, resumption and probe, so at-least-once calls make exactly one charge.
 */
export function providerChargeKey(paymentId: string): string {
  return derivedKey({ system: 'provider', subject: 'payment', ourId: paymentId });
}

/** The idempotency key of one operation (capture, void, refund) on a charge: one per operation id. */
export function providerOperationKey(
  kind: 'capture' | 'void' | 'refund',
  operationId: string,
): string {
  return derivedKey({ system: 'provider', subject: kind, ourId: operationId });
}
