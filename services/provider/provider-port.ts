/** A charge as the payments service asks for it; the provider service derives its key. */
export interface ChargeRequest {
  paymentId: string;
  amountMinor: string;
  currency: string;
  paymentMethod: string;
  reference: string;
  capture: boolean;
}

/**
 * What a charge attempt came to. `unavailable` means the provider proved nothing happened (a
 * 503 or 429, or a refused connection); `timeout` means we do not know — the charge may exist.
 * The two are never merged: the first is safe to report, the second must be resolved.
 */
export type ChargeOutcome =
  | { kind: 'approved'; providerReference: string; captured: boolean }
  | { kind: 'declined'; providerReference: string | null; failureCode: string }
  | { kind: 'unavailable'; retryAfterSeconds: number }
  | { kind: 'timeout' };

/** A charge as the provider's books show it (probe answers and statements). */
export interface ProviderCharge {
  id: string;
  idempotencyKey: string;
  status: 'authorized' | 'captured' | 'declined' | 'voided';
  failureCode: string | null;
  createdAt: string;
}

/** The provider's books for a period, final up to `completeUntil`. */
export interface ProviderStatement {
  charges: ProviderCharge[];
  completeUntil: string;
}

/** A capture, void or refund of a payment's charge, keyed by the operation that asks for it. */
export interface ChargeOperationRequest {
  operationId: string;
  kind: 'capture' | 'void' | 'refund';
  chargeId: string;
  /** For a capture: the amount to capture, in minor units (the rest is released); for a refund,
   * the amount to give back. */
  amountMinor: string | null;
  currency: string;
  /** A refund's reason, passed on to the provider. */
  reason: string | null;
}

/**
 * A capture or void: applied, refused by the provider for a business reason (the charge is not
 * in a state that allows it), or the same transient outcomes as a charge.
 */
export type ChargeOperationOutcome =
  | { kind: 'applied'; providerReference: string }
  | { kind: 'refused'; code: string }
  | { kind: 'unavailable'; retryAfterSeconds: number }
  | { kind: 'timeout' };

export interface ProviderPort {
  charge(request: ChargeRequest): Promise<ChargeOutcome>;
  operate(request: ChargeOperationRequest): Promise<ChargeOperationOutcome>;
  statement(range: { from: string; to: string }): Promise<ProviderStatement>;
}

/** What a charge found in the provider's books means for the payment. */
export function outcomeOfCharge(
  charge: ProviderCharge,
): Extract<ChargeOutcome, { kind: 'approved' | 'declined' }> {
  switch (charge.status) {
    case 'authorized':
      return { kind: 'approved', providerReference: charge.id, captured: false };
    case 'captured':
      return { kind: 'approved', providerReference: charge.id, captured: true };
    case 'declined':
      return {
        kind: 'declined',
        providerReference: charge.id,
        failureCode: charge.failureCode ?? 'CARD_DECLINED',
      };
    case 'voided':
      // A create never voids; a voided charge here means someone else acted on it. Stop.
      throw new Error(`charge ${charge.id} is voided at the provider; settle it by hand`);
  }
}
