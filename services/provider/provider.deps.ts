import type { Logger } from '../../lib/logging/logger.ts';
import type { RequestTrace } from '../../lib/logging/request-trace.ts';
import type { ProviderAdapter } from './provider-adapter.ts';
import type { ProviderMetrics } from './provider.metrics.ts';

/**
 * What the provider service needs: its PSP adapter, its series, and the request it works for.
 * No database: it runs the same inside the whole stack and alone (SERVICES=provider).
 */
export interface ProviderDeps {
  metrics: ProviderMetrics;
  log: Logger;
  trace: RequestTrace | null;
  providerAdapter: ProviderAdapter;
  config: {
    providerTimeoutMs: number;
    /** Attempts per call for answers that prove nothing happened (503, 429). */
    providerMaxAttempts: number;
  };
}
