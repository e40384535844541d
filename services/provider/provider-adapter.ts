import type { ChargeOutcome } from './provider-port.ts';

export interface AdapterChargeRequest {
  idempotencyKey: string;
  amount: string;
  currency: string;
  paymentMethod: string;
  reference: string;
  capture: boolean;
  timeoutMs: number;
}

/** One PSP, behind the shape every adapter must honour (a shared contract suite tests it). */
export interface ProviderAdapter {
  charge(request: AdapterChargeRequest): Promise<ChargeOutcome>;
}
