/**
 * The provider service's contract: the types and pure helpers other services may use. Payments
 * reaches the provider through a `ProviderPort` (a tRPC caller or client) and reads its answers
 * with these; nothing here runs a procedure or touches the PSP.
 */
export { outcomeOfCharge } from './provider-port.ts';
export type {
  ProviderCharge,
  ChargeOperationOutcome,
  ChargeOutcome,
  FinalChargeOutcome,
  FinalOperationOutcome,
  Probed,
  ProviderPort,
} from './provider-port.ts';
export type { ProviderAdapter } from './provider-adapter.ts';
export type { ProviderMetrics } from './provider.metrics.ts';
export type { ProviderDeps } from './provider.deps.ts';
