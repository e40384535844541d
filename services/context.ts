import type pg from 'pg';
import type { FaultPoints } from './kernel/faults.ts';
import type { IdempotencyEngine } from './kernel/idempotency/engine.ts';
import type { Logger } from './kernel/logging/logger.ts';
import type { Metrics } from './kernel/metrics.ts';
import type { ProviderAdapter } from './provider/provider-adapter.ts';
import type { ProviderPort } from './provider/provider-port.ts';

/** Everything a service needs, passed in by whoever composes the process: no singletons. */
export interface ServiceDeps {
  pool: pg.Pool;
  engine: IdempotencyEngine;
  faults: FaultPoints;
  metrics: Metrics;
  /** Structured logs; every line carries the current request's id, tenant and operation. */
  log: Logger;
  /** The provider service's own adapter to the PSP. Only the provider service touches it. */
  providerAdapter: ProviderAdapter;
  /** How the payments service reaches the provider service (a tRPC client in production). */
  provider: ProviderPort;
  config: {
    providerTimeoutMs: number;
    /** Attempts per provider call for answers that prove nothing happened (503, 429). */
    providerMaxAttempts: number;
    /**
     * The provider's promise: a request it received is applied within this long or never. Only
     * books final past the last attempt plus this window prove a charge absent.
     */
    providerApplyWindowMs: number;
    /** /readyz answers ready once this migration has run. */
    latestMigration: string;
  };
}

export interface ServiceContext {
  deps: ServiceDeps;
}
