/**
 * A charge as the payments service asks for it, under the key it derived from the logical
 * request and stored with the payment (services/payments/provider-keys.ts).
 */
export interface ChargeRequest {
  idempotencyKey: string;
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

/** A capture, void or refund of a payment's charge, under the key stored with its operation. */
export interface ChargeOperationRequest {
  idempotencyKey: string;
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

/** The outcomes a charge can be settled by: what an answer or a probe can prove. */
export type FinalChargeOutcome = Extract<ChargeOutcome, { kind: 'approved' | 'declined' }>;
/** The outcomes an operation can be settled by. */
export type FinalOperationOutcome = Extract<
  ChargeOperationOutcome,
  { kind: 'applied' | 'refused' }
>;

/**
 * What a probe learnt of an earlier attempt: its outcome, proof that the provider has nothing
 * under the key (`missing`: the instruction may be sent again under it), or no answer.
 */
export type Probed<Outcome> =
  { kind: 'found'; outcome: Outcome } | { kind: 'missing' } | { kind: 'timeout' };

/**
 * How long the caller can still wait for this one call: its own budget, capped by the provider
 * service's PROVIDER_TIMEOUT_MS. Unset: the provider timeout.
 */
export interface CallBudget {
  timeoutMs?: number | undefined;
}

/**
 * How the payments service reaches the provider service. Each call is one attempt (refusals that
 * prove nothing happened are retried inside it, under the same key); what to do after a timeout
 * (probe, send again) is the caller's, who holds the lease (payments' provider-resolution.ts).
 */
export interface ProviderPort {
  charge(request: ChargeRequest & CallBudget): Promise<ChargeOutcome>;
  /** The charge the payment's derived key made, found by key (or by reference). */
  probeCharge(
    request: { idempotencyKey: string; reference: string } & CallBudget,
  ): Promise<Probed<FinalChargeOutcome>>;
  operate(request: ChargeOperationRequest & CallBudget): Promise<ChargeOperationOutcome>;
  /** The capture, void or refund the operation's derived key made. A refusal is not found:
   * sending again under the key replays it. */
  probeOperation(
    request: { idempotencyKey: string; kind: ChargeOperationRequest['kind'] } & CallBudget,
  ): Promise<Probed<Extract<ChargeOperationOutcome, { kind: 'applied' }>>>;
  statement(range: { from: string; to: string }): Promise<ProviderStatement>;
}

/** What a charge found in the provider's books means for the payment. */
export function outcomeOfCharge(charge: ProviderCharge): FinalChargeOutcome {
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
