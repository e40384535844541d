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

/** A probe's answer: the charge, proof that there is none, or no answer at all. */
export type ProbeOutcome =
  { kind: 'found'; charge: ProviderCharge } | { kind: 'missing' } | { kind: 'timeout' };

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
  /** Looks a charge up by the idempotency key it was (or would have been) made with. */
  probe(request: Traced & { idempotencyKey: string; timeoutMs: number }): Promise<ProbeOutcome>;
  /** The provider's books for [from, to). Throws when it cannot be had: reconciliation waits. */
  statement(
    request: Traced & { from: string; to: string; timeoutMs: number },
  ): Promise<ProviderStatement>;
}
