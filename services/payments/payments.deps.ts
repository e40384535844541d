import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { Keyring } from '../../lib/crypto/keyring.ts';
import type { TenantFairGate } from '../../lib/db/tenant-fair-gate.ts';
import type { FaultPoints } from '../../lib/faults.ts';
import type { IdempotencyEngine } from '../../lib/idempotency/engine.ts';
import type { Logger } from '../../lib/logging/logger.ts';
import type { RequestTrace } from '../../lib/logging/request-trace.ts';
import type { ProviderPort } from '../provider/contract.ts';

/**
 * What the payments service needs, and all it may touch: no PSP adapter (the provider service
 * owns it) and no webhook egress (notifications does). The process composes these with every
 * other service's declaration (services/context.ts).
 */
export interface PaymentsDeps {
  /** The request path's pool: admission, fenced phases, pipelined statements. */
  pool: pg.Pool;
  /** The process's ORM, for reads: one fork per call. */
  orm: MikroORM;
  /** Shares the ORM's connections among tenants: every read of payments runs through it. */
  reads: TenantFairGate;
  engine: IdempotencyEngine;
  faults: FaultPoints;
  /** Seals stored answers; keys request hashes. */
  keyring: Keyring;
  /** The request's logger when `trace` is set, else the process's. */
  log: Logger;
  /** The request these deps work for, or null (background jobs, tests). */
  trace: RequestTrace | null;
  /** The same deps working for one request (a resume the worker starts). */
  forTrace(trace: RequestTrace): PaymentsDeps;
  /** The provider service: in process, or over tRPC (app/provider-over-http.ts). */
  provider: ProviderPort;
  /** The secret provider keys are derived under (provider-keys.ts). */
  providerKeySecret: { get(): Promise<Buffer> };
  config: {
    providerTimeoutMs: number;
    /** The provider's promise: a request it received is applied within this long or never. */
    providerApplyWindowMs: number;
  };
}
