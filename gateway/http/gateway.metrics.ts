import { Counter, Histogram, type Registry } from 'prom-client';
import { LATENCY_BUCKETS } from '../../lib/metrics.ts';

/** The gateway's series (docs/api.md §5), added to the process's registry by the app. */
export function createGatewayMetrics(registry: Registry) {
  const registers = [registry];
  return {
    registry,
    graphqlDuration: new Histogram({
      name: 'graphql_request_duration_seconds',
      help: 'Duration of GraphQL requests by root operation.',
      labelNames: ['service', 'operation'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    rateLimited: new Counter({
      name: 'gateway_rate_limited_total',
      help: 'Requests refused with RATE_LIMITED by this process, by limit (tenant, unauthenticated).',
      labelNames: ['service', 'limit'] as const,
      registers,
    }),
    connectionsDropped: new Counter({
      name: 'gateway_connections_dropped_total',
      help: 'Connections closed at accept because the server held MAX_CONNECTIONS already.',
      labelNames: ['service'] as const,
      registers,
    }),
  };
}

export type GatewayMetrics = ReturnType<typeof createGatewayMetrics>;

/** The duration series at zero for every root operation the schema names. */
export function initialiseGatewaySeries(
  metrics: GatewayMetrics,
  operations: readonly string[],
): void {
  for (const operation of operations)
    metrics.graphqlDuration.zero({ service: 'gateway', operation });
}
