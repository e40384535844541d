import type {
  ChargeOperationOutcome,
  ChargeOutcome,
  ProviderCharge,
  ProviderStatement,
} from './provider-port.ts';

/**
 * Every call may name the request it belongs to: sent as X-Request-Id, so the provider's logs
 * and ours can be joined.
 */
export interface Traced {
  requestId?: string | undefined;
}

export interface AdapterChargeRequest extends Traced {
  idempotencyKey: string;
  amount: string;
  currency: string;
  paymentMethod: string;
  reference: string;
  capture: boolean;
  timeoutMs: number;
}

/**
 * A probe's answer: what the key made, proof that it made nothing (`missing`: the provider said
 * so in as many words), or no answer at all (`timeout`: anything else, which proves nothing).
 */
export type ProbeOutcome<Found> =
  ({ kind: 'found' } & Found) | { kind: 'missing' } | { kind: 'timeout' };

/** A charge probe's find. */
export type ChargeProbe = ProbeOutcome<{ charge: ProviderCharge }>;

/** A capture, void or refund probe's find: the reference `operate` answers when it applies. */
export type OperationProbe = ProbeOutcome<{ providerReference: string }>;

/** One PSP, behind the shape every adapter must honour (a shared contract suite tests it). */
export interface ProviderAdapter {
  charge(request: AdapterChargeRequest): Promise<ChargeOutcome>;
  /** Captures, voids or refunds a charge under the operation's own idempotency key. */
  operate(
    request: Traced & {
      kind: 'capture' | 'void' | 'refund';
      chargeId: string;
      amount: string | null;
      reason: string | null;
      idempotencyKey: string;
      timeoutMs: number;
    },
  ): Promise<ChargeOperationOutcome>;
  /**
   * Looks a charge up by the idempotency key it was (or would have been) made with, and by its
   * end-to-end reference where the provider has no lookup by key.
   */
  probeCharge(
    request: Traced & { idempotencyKey: string; reference: string; timeoutMs: number },
  ): Promise<ChargeProbe>;
  /** Looks a capture, void or refund up by the operation's idempotency key. */
  probeOperation(
    request: Traced & {
      kind: 'capture' | 'void' | 'refund';
      idempotencyKey: string;
      timeoutMs: number;
    },
  ): Promise<OperationProbe>;
  /** The provider's books for [from, to). Throws when it cannot be had: reconciliation waits. */
  statement(
    request: Traced & { from: string; to: string; timeoutMs: number },
  ): Promise<ProviderStatement>;
}
