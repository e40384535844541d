import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { Keyring } from '../lib/crypto/keyring.ts';
import type { FaultPoints } from '../lib/faults.ts';
import type { IdempotencyEngine } from '../lib/idempotency/engine.ts';
import type { Logger } from '../lib/logging/logger.ts';
import type { RequestTrace } from '../lib/logging/request-trace.ts';
import type { LibMetrics } from '../lib/metrics.ts';
import type { LedgerDeps, LedgerMetrics } from './ledger/contract.ts';
import type { OpsDeps } from './ops/contract.ts';
import type { SystemDeps } from './system/contract.ts';
import type { TenantsDeps } from './tenants/contract.ts';
import type {
  ProviderAdapter,
  ProviderDeps,
  ProviderMetrics,
  ProviderPort,
} from './provider/contract.ts';
import type { NotificationsDeps, WebhookEgress } from './notifications/contract.ts';
import type { PaymentsDeps } from './payments/contract.ts';

/** The series the services write: lib's and each service's own, on one registry. */
export type ServiceMetrics = LibMetrics & ProviderMetrics & LedgerMetrics;

export type {
  PaymentsDeps,
  ProviderDeps,
  NotificationsDeps,
  LedgerDeps,
  TenantsDeps,
  SystemDeps,
  OpsDeps,
};

/**
 * Everything the services of one process need, passed in by whoever composes it: no
 * singletons. Each service declares its own part (payments.deps.ts, provider.deps.ts,
 * notifications.deps.ts), so a flow takes only what its service may use and the type checker
 * refuses, say, a payments flow that reaches the PSP adapter. This composes them, with what
 * the services without a declaration of their own still read here.
 */
export interface ServiceDeps
  extends
    PaymentsDeps,
    ProviderDeps,
    NotificationsDeps,
    LedgerDeps,
    TenantsDeps,
    SystemDeps,
    OpsDeps {
  /** The request path's pool: admission, fenced phases, pipelined statements (hand-written SQL). */
  pool: pg.Pool;
  /**
   * The process's one MikroORM instance, for reads and management (ADR 0020). Work on
   * `orm.em.fork()`, one fork per call: the global manager refuses use (allowGlobalContext).
   */
  orm: MikroORM;
  engine: IdempotencyEngine;
  faults: FaultPoints;
  metrics: ServiceMetrics;
  /**
   * DATA_ENCRYPTION_KEYS: seals stored answers and webhook signing secrets under its first key,
   * opens what any of its keys sealed, and keys request hashes.
   */
  keyring: Keyring;
  /** Structured logs: the request's logger (its id, tenant and operation on every line) when
   * `trace` is set, else the process's. */
  log: Logger;
  /**
   * The request these deps work for, or null: the process-wide deps of background jobs (the
   * reconciler, the outbox) and of tests. A request's deps come from `forTrace`.
   */
  trace: RequestTrace | null;
  /**
   * The same deps working for one request: its logger, an engine that annotates it, and
   * provider calls whose procedures see it (and send its id to the PSP).
   */
  forTrace(trace: RequestTrace): ServiceDeps;
  /** The provider service's own adapter to the PSP. Only the provider service touches it. */
  providerAdapter: ProviderAdapter;
  /** How the payments service reaches the provider service (a tRPC client in production). */
  provider: ProviderPort;
  /** The secret provider keys are derived under (services/payments/provider-keys.ts). */
  providerKeySecret: { get(): Promise<Buffer> };
  /**
   * Where webhooks may go and the one way they leave the process: registration judges URLs
   * with its allow-list, delivery posts through it (one connection pool per composition).
   */
  webhookEgress: WebhookEgress;
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
  /** Webhook endpoints a tenant may have (WEBHOOK_ENDPOINTS_PER_TENANT). */
  webhookEndpointsPerTenant: number;
}

export interface ServiceContext {
  deps: ServiceDeps;
}
