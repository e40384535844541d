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

export interface ProviderPort {
  charge(request: ChargeRequest): Promise<ChargeOutcome>;
}
