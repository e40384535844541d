import { Counter, Histogram, type Registry } from 'prom-client';
import { LATENCY_BUCKETS } from '../../lib/metrics.ts';

/** The provider service's series (docs/api.md §5), added to the process's registry at composition. */
export function createProviderMetrics(registry: Registry) {
  const registers = [registry];
  return {
    providerCalls: new Counter({
      name: 'provider_calls_total',
      help: 'Calls to the payment provider by outcome.',
      labelNames: ['service', 'operation', 'outcome'] as const,
      registers,
    }),
    providerDuration: new Histogram({
      name: 'provider_call_duration_seconds',
      help: 'Duration of provider calls, including ones that timed out.',
      labelNames: ['service', 'operation'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
  };
}

export type ProviderMetrics = ReturnType<typeof createProviderMetrics>;

/** Every provider series at zero for each operation, so a dashboard's rate() sees it from the start. */
export function initialiseProviderSeries(
  metrics: ProviderMetrics,
  operations: readonly string[],
): void {
  for (const operation of operations) {
    for (const outcome of [
      'approved',
      'declined',
      'timeout',
      'error',
      'probe_found',
      'probe_missing',
    ]) {
      metrics.providerCalls.inc({ service: 'provider', operation, outcome }, 0);
    }
    metrics.providerDuration.zero({ service: 'provider', operation });
  }
}
