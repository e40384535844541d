import { isBearerTokenShape, MAX_BEARER_TOKEN_CHARS } from './http/bearer.ts';
import { Keyring } from '../services/kernel/crypto/keyring.ts';
import { ConfigInvalidError } from '../services/kernel/errors.ts';
import { DEFAULT_RETENTION_POLICY } from '../services/kernel/idempotency/retention.ts';
import {
  parseWebhookAllowList,
  type WebhookAllowList,
} from '../services/notifications/webhook-url.policy.ts';

/**
 * Configuration from the environment (docs/api.md §1.2). Every value is validated at start: a typo
 * in a number fails the start loudly instead of running with NaN leases.
 */
export interface Config {
  host: string;
  port: number;
  databaseUrl: string | undefined;
  pspUrl: string | undefined;
  sandboxBlackholeMs: number;
  bootstrapTenants: Array<{ name: string; apiKey: string }> | undefined;
  internalToken: string | undefined;
  idempotencyTtlSeconds: number;
  idempotencyMetadataRetentionSeconds: number | undefined;
  idempotencyResponseMaxBytes: number | undefined;
  idempotencyPartitionSeconds: number | undefined;
  retentionIntervalMs: number | undefined;
  leaseMs: number;
  recoveryIntervalMs: number;
  providerTimeoutMs: number;
  reconciliationIntervalMs: number | undefined;
  unknownAfterAttempts: number | undefined;
  providerApplyWindowMs: number | undefined;
  backoffBaseMs: number | undefined;
  outboxClaimLeaseMs: number | undefined;
  outboxIntervalMs: number | undefined;
  /** WEBHOOK_ALLOWED_HOSTS: hosts and CIDRs webhooks may reach although private or loopback. */
  webhookAllowList: WebhookAllowList;
  /**
   * DATA_ENCRYPTION_KEYS, validated; undefined when unset (src/main.ts decides whether a start
   * without it may go on).
   */
  dataEncryptionKeys: Keyring | undefined;
  /** NODE_ENV: only `test` and `development` may run on DATABASE_URL with a generated data key. */
  nodeEnv: string | undefined;
  /** Test-only: `name=crash,…` arms fault points in this process. */
  faultPoints: string | undefined;
  logLevel: string;
  // Edge limits (docs/api.md §1.4): all off or on their defaults unless set.
  rateLimitTenantPerSecond: number | undefined;
  rateLimitTenantBurst: number | undefined;
  rateLimitUnauthenticatedPerSecond: number | undefined;
  internalPort: number | undefined;
  internalHost: string;
}

/** Default lease: well beyond one provider timeout plus a probe, so a live owner never loses it. */
const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_RECOVERY_INTERVAL_MS = 5_000;
/** Default provider timeout: card networks answer in well under a second; 5 s is a stall. */
const DEFAULT_PROVIDER_TIMEOUT_MS = 5_000;
const DEFAULT_SANDBOX_BLACKHOLE_MS = 30_000;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function logLevel(raw: string | undefined): string {
  if (raw === undefined || raw === '') return 'info';
  if (!LOG_LEVELS.includes(raw)) {
    throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; got ${raw}`);
  }
  return raw;
}

function optionalInteger(
  env: NodeJS.ProcessEnv,
  spec: { name: string; min: number },
): number | undefined {
  const raw = env[spec.name];
  return raw === undefined || raw === '' ? undefined : integer(env, { ...spec, fallback: 0 });
}

function integer(
  env: NodeJS.ProcessEnv,
  spec: { name: string; fallback: number; min: number },
): number {
  const { name, fallback, min } = spec;
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${name} must be an integer ≥ ${min}, got "${raw}"`);
  return value;
}

function tenants(raw: string | undefined): Config['bootstrapTenants'] {
  if (raw === undefined || raw.trim() === '') return undefined;
  return raw.split(',').map((entry) => {
    const at = entry.indexOf(':');
    const name = entry.slice(0, at).trim();
    const apiKey = entry.slice(at + 1).trim();
    if (at < 1 || name === '' || apiKey.length < 16 || !isBearerTokenShape(apiKey)) {
      throw new Error(
        `BOOTSTRAP_TENANTS must be name:apiKey,… with API keys of 16 to ${MAX_BEARER_TOKEN_CHARS} characters of [A-Za-z0-9-._~+/]`,
      );
    }
    return { name, apiKey };
  });
}

/**
 * FAULT_POINTS kills the process at a named point: a test's tool. Outside NODE_ENV=test it is
 * refused at start, so a variable left in a deployment's environment cannot crash production.
 */
function faultPoints(env: NodeJS.ProcessEnv): string | undefined {
  const spec = env['FAULT_POINTS'] || undefined;
  if (spec !== undefined && env['NODE_ENV'] !== 'test') {
    throw new Error('FAULT_POINTS is accepted only with NODE_ENV=test');
  }
  return spec;
}

/**
 * The edge's limits and the internal port. A burst without a rate, or an internal port equal
 * to the public one, fails the start: either would leave the operator believing in a limit or
 * a separation that is not there.
 */
function edgeConfig(env: NodeJS.ProcessEnv, port: number) {
  const rateLimitTenantPerSecond = optionalInteger(env, {
    name: 'RATE_LIMIT_TENANT_PER_SECOND',
    min: 1,
  });
  const rateLimitTenantBurst = optionalInteger(env, { name: 'RATE_LIMIT_TENANT_BURST', min: 1 });
  if (rateLimitTenantBurst !== undefined && rateLimitTenantPerSecond === undefined)
    throw new Error('RATE_LIMIT_TENANT_BURST is set but RATE_LIMIT_TENANT_PER_SECOND is not');
  const internalPort = optionalInteger(env, { name: 'INTERNAL_PORT', min: 0 });
  if (internalPort !== undefined && internalPort !== 0 && internalPort === port)
    throw new Error(`INTERNAL_PORT must differ from PORT, both are ${port}`);
  return {
    rateLimitTenantPerSecond,
    rateLimitTenantBurst,
    rateLimitUnauthenticatedPerSecond: optionalInteger(env, {
      name: 'RATE_LIMIT_UNAUTHENTICATED_PER_SECOND',
      min: 1,
    }),
    internalPort,
    internalHost: env['INTERNAL_HOST'] || '127.0.0.1',
  };
}

function keyring(raw: string | undefined): Keyring | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  try {
    return Keyring.parse(raw, 'DATA_ENCRYPTION_KEYS');
  } catch (error) {
    // Keyring.parse names the variable and never echoes key material.
    throw new ConfigInvalidError(error instanceof Error ? error.message : String(error));
  }
}

export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const leaseMs = integer(env, { name: 'LEASE_MS', fallback: DEFAULT_LEASE_MS, min: 100 });
  const providerTimeoutMs = integer(env, {
    name: 'PROVIDER_TIMEOUT_MS',
    fallback: DEFAULT_PROVIDER_TIMEOUT_MS,
    min: 1,
  });
  const port = integer(env, { name: 'PORT', fallback: 4000, min: 0 });
  return {
    // Loopback unless told otherwise: a developer's `npm start` should not face the network.
    host: env['HOST'] || '127.0.0.1',
    port,
    databaseUrl: env['DATABASE_URL'] || undefined,
    pspUrl: env['PSP_URL'] || undefined,
    sandboxBlackholeMs: integer(env, {
      name: 'SANDBOX_BLACKHOLE_MS',
      fallback: DEFAULT_SANDBOX_BLACKHOLE_MS,
      min: 0,
    }),
    bootstrapTenants: tenants(env['BOOTSTRAP_TENANTS']),
    internalToken: env['INTERNAL_TOKEN'] || undefined,
    idempotencyTtlSeconds: integer(env, {
      name: 'IDEMPOTENCY_TTL_SECONDS',
      fallback: DEFAULT_RETENTION_POLICY.ttlSeconds,
      min: 1,
    }),
    idempotencyMetadataRetentionSeconds: optionalInteger(env, {
      name: 'IDEMPOTENCY_METADATA_RETENTION_SECONDS',
      min: 0,
    }),
    idempotencyResponseMaxBytes: optionalInteger(env, {
      name: 'IDEMPOTENCY_RESPONSE_MAX_BYTES',
      min: 256,
    }),
    idempotencyPartitionSeconds: optionalInteger(env, {
      name: 'IDEMPOTENCY_PARTITION_SECONDS',
      min: 60,
    }),
    retentionIntervalMs: optionalInteger(env, { name: 'RETENTION_INTERVAL_MS', min: 10 }),
    leaseMs,
    recoveryIntervalMs: integer(env, {
      name: 'RECOVERY_INTERVAL_MS',
      fallback: DEFAULT_RECOVERY_INTERVAL_MS,
      min: 10,
    }),
    providerTimeoutMs,
    // Unset: the app's defaults (src/app.ts), kept in one place.
    reconciliationIntervalMs: optionalInteger(env, { name: 'RECONCILIATION_INTERVAL_MS', min: 10 }),
    unknownAfterAttempts: optionalInteger(env, { name: 'PROVIDER_UNKNOWN_AFTER_ATTEMPTS', min: 1 }),
    providerApplyWindowMs: optionalInteger(env, { name: 'PROVIDER_APPLY_WINDOW_MS', min: 0 }),
    backoffBaseMs: optionalInteger(env, { name: 'RECOVERY_BACKOFF_BASE_MS', min: 1 }),
    outboxClaimLeaseMs: optionalInteger(env, { name: 'OUTBOX_CLAIM_LEASE_MS', min: 100 }),
    outboxIntervalMs: optionalInteger(env, { name: 'OUTBOX_INTERVAL_MS', min: 10 }),
    webhookAllowList: parseWebhookAllowList(env['WEBHOOK_ALLOWED_HOSTS'], 'WEBHOOK_ALLOWED_HOSTS'),
    faultPoints: faultPoints(env),
    dataEncryptionKeys: keyring(env['DATA_ENCRYPTION_KEYS']),
    nodeEnv: env['NODE_ENV'] || undefined,
    logLevel: logLevel(env['LOG_LEVEL']),
    ...edgeConfig(env, port),
  };
}
