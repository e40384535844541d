/** The provider service's surface: what the rest of the house may import from it. */
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
export { providerRouter } from './provider.router.ts';
export type { ProviderAdapter } from './provider-adapter.ts';
export { createHttpProviderAdapter } from './http-provider-adapter.ts';
export { createProviderMetrics } from './provider.metrics.ts';
export type { ProviderMetrics } from './provider.metrics.ts';
export { initialiseProviderSeries } from './provider.metrics.ts';
