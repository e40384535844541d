/** The provider service's surface for the composition: its contract, router and factories. */
export * from './contract.ts';
export { providerRouter, providerServiceRouter } from './provider.router.ts';
export { createHttpProviderAdapter } from './http-provider-adapter.ts';
export { createProviderMetrics } from './provider.metrics.ts';
export { initialiseProviderSeries } from './provider.metrics.ts';
