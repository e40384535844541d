import { z } from 'zod';
import { DatabaseUrlError, parseDatabaseUrl } from '../lib/db/database-url.ts';
import { Keyring } from '../lib/crypto/keyring.ts';
import { MIN_LEASE_MS } from '../lib/idempotency/lease-heartbeat.ts';
import { DEFAULT_RETENTION_POLICY } from '../lib/idempotency/retention.ts';
import { DEFAULT_OUTBOX_RETENTION } from '../lib/outbox/outbox-retention.ts';
import { LOG_FORMATS } from '../lib/logging/log-format.ts';
import { parseWebhookAllowList } from '../services/notifications/index.ts';
import { isBearerTokenShape, MAX_BEARER_TOKEN_CHARS } from '../gateway/http/bearer.ts';
import { DEFAULT_MAX_CONNECTIONS } from '../gateway/http/server-timeouts.ts';
import { parseServices, parseServiceUrls, type ServiceName } from './topology.ts';

/**
 * Every environment variable the gateway reads, in one zod schema: its name, type, default, unit
 * and meaning. `loadConfig` validates the environment against it once, at start; the `Config`
 * type is inferred from it; the README's configuration table is generated from it (a test fails
 * when the two differ). A default lives here and nowhere else.
 */
export interface VariableDoc {
  /** The environment variable. */
  env: string;
  /**
   * What happens when it is unset, as the table shows it; taken from the schema's default
   * when it has one, so only a variable without one says it here (off, or what happens).
   */
  shown?: string;
  unit?: string;
  description: string;
}

const docs = new Map<z.ZodType, VariableDoc>();

/** Attaches a variable's documentation to its schema. */
function variable<T extends z.ZodType>(schema: T, doc: VariableDoc): T {
  docs.set(schema, doc);
  return schema;
}

const integer = (min: number) =>
  z
    .string()
    .regex(/^-?\d+$/, 'must be an integer')
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(Number.MAX_SAFE_INTEGER));

function withDefault(min: number, value: number) {
  return integer(min).default(value);
}

/** A switch: true/false (also 1/0, yes/no, on/off), so a typo stops the start instead of guessing. */
const flag = (value: boolean) => z.stringbool({ error: 'must be true or false' }).default(value);

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** A parser that throws one line (its own message) into a zod issue for its variable. */
function parsedBy<T>(parse: (raw: string) => T) {
  return z.string().transform((raw, ctx) => {
    try {
      return parse(raw);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: error instanceof Error ? error.message : 'invalid' });
      return z.NEVER;
    }
  });
}

/**
 * The shortest key BOOTSTRAP_TENANTS may give. Keys are stored keyed (HMAC), but an operator's
 * key is only as strong as what was typed: 32 characters of base64 are 192 bits, and even a
 * key of hex or words is then beyond a search. A 16-character key fell to one in seconds.
 */
const BOOTSTRAP_API_KEY_MIN_CHARS = 32;

function tenants(raw: string): Array<{ name: string; apiKey: string }> {
  return raw.split(',').map((entry, index) => {
    const at = entry.indexOf(':');
    const name = entry.slice(0, at).trim();
    const apiKey = entry.slice(at + 1).trim();
    if (at < 1 || name === '' || !isBearerTokenShape(apiKey)) {
      throw new Error(
        `must be name:apiKey,… with API keys of ${BOOTSTRAP_API_KEY_MIN_CHARS} to ${MAX_BEARER_TOKEN_CHARS} characters of [A-Za-z0-9-._~+/]`,
      );
    }
    // Names the tenant, never the key: this line goes to the operator's log.
    if (apiKey.length < BOOTSTRAP_API_KEY_MIN_CHARS) {
      throw new Error(
        `BOOTSTRAP_TENANTS: the API key of tenant ${index + 1} (${name}) is ${apiKey.length} characters; at least ${BOOTSTRAP_API_KEY_MIN_CHARS} are required (e.g. sk_live_$(openssl rand -hex 24))`,
      );
    }
    return { name, apiKey };
  });
}

/**
 * Default lease: how long a dead owner's request waits before a retry or the worker takes it
 * over. A live owner renews it while it waits on the provider (lease-heartbeat.ts), so it need
 * not outlast a provider call; it is the time an owner may stall before it is presumed dead.
 */
const DEFAULT_LEASE_MS = 30_000;
/** Default provider timeout: card networks answer in well under a second; 5 s is a stall. */
const DEFAULT_PROVIDER_TIMEOUT_MS = 5_000;
/**
 * How long after receiving a request the provider may still apply it. Card processors settle
 * well within a minute; the sandbox within its 3 s slow token. Reconciliation waits this out.
 */
const DEFAULT_PROVIDER_APPLY_WINDOW_MS = 60_000;
/** Stored answers above this are kept as a reference to the resource (a few KB, per the seeds). */
const DEFAULT_RESPONSE_MAX_BYTES = 8 * 1024;
/** Partition maintenance is cheap and idempotent; it runs well within a partition's width. */
const DEFAULT_RETENTION_INTERVAL_MS = 10 * 60_000;

export const configSchema = z.object({
  host: variable(z.string().default('127.0.0.1'), {
    env: 'HOST',
    description: 'address to bind',
  }),
  port: variable(withDefault(0, 4000), {
    env: 'PORT',
    description: 'HTTP port: GraphQL, health (tRPC, metrics unless `INTERNAL_PORT`)',
  }),
  databaseUrl: variable(z.string().superRefine(refuseUnusableDatabaseUrl).optional(), {
    env: 'DATABASE_URL',
    shown: 'embedded PostgreSQL, data under `.data/`',
    description:
      'a PostgreSQL 15+ server, any form libpq accepts (`?host=/socket/dir` too); several hosts with `target_session_attrs=read-write` follow a failover',
  }),
  pspUrl: variable(z.string().url('must be a URL').optional(), {
    env: 'PSP_URL',
    shown: 'the sandbox provider, in the process',
    description: 'base URL of the payment provider',
  }),
  sandboxBlackholeMs: variable(withDefault(0, 30_000), {
    env: 'SANDBOX_BLACKHOLE_MS',
    unit: 'ms',
    description: 'how long the sandbox’s `pm_card_unknown` hangs calls and probes',
  }),
  sandboxPspPort: variable(withDefault(0, 4010), {
    env: 'SANDBOX_PSP_PORT',
    description: 'port of `npm run sandbox-psp`, the sandbox provider as its own process',
  }),
  sandboxStatementLagMs: variable(withDefault(0, 1_000), {
    env: 'SANDBOX_STATEMENT_LAG_MS',
    unit: 'ms',
    description: 'the sandbox’s statement is final up to now minus this',
  }),
  sandboxKeyRetentionSeconds: variable(integer(1).optional(), {
    env: 'SANDBOX_KEY_RETENTION_SECONDS',
    shown: 'unset: for ever',
    unit: 's',
    description:
      'how long the sandbox remembers an idempotency key; an older key is new, as at real providers',
  }),
  bootstrapTenants: variable(parsedBy(tenants).optional(), {
    env: 'BOOTSTRAP_TENANTS',
    shown: 'a `demo` tenant with a generated key',
    description: '`name:apiKey,…`: tenants created or re-keyed at start',
  }),
  internalToken: variable(z.string().min(16, 'must be at least 16 characters').optional(), {
    env: 'INTERNAL_TOKEN',
    shown: 'generated and printed',
    description: 'bearer token required on `/trpc`',
  }),
  idempotencyTtlSeconds: variable(withDefault(1, DEFAULT_RETENTION_POLICY.ttlSeconds), {
    env: 'IDEMPOTENCY_TTL_SECONDS',
    unit: 's',
    description: 'the replay window, advertised as `expiresAt`',
  }),
  idempotencyMetadataRetentionSeconds: variable(
    withDefault(0, DEFAULT_RETENTION_POLICY.metadataRetentionSeconds),
    {
      env: 'IDEMPOTENCY_METADATA_RETENTION_SECONDS',
      unit: 's',
      description: 'how long a key’s metadata outlives its window',
    },
  ),
  idempotencyResponseMaxBytes: variable(withDefault(256, DEFAULT_RESPONSE_MAX_BYTES), {
    env: 'IDEMPOTENCY_RESPONSE_MAX_BYTES',
    unit: 'bytes',
    description: 'a stored answer larger than this is stored as a reference to its resource',
  }),
  idempotencyPartitionSeconds: variable(
    withDefault(60, DEFAULT_RETENTION_POLICY.partitionSeconds),
    {
      env: 'IDEMPOTENCY_PARTITION_SECONDS',
      unit: 's',
      description: 'width of one retention partition',
    },
  ),
  outboxRetentionSeconds: variable(withDefault(3_600, DEFAULT_OUTBOX_RETENTION.retentionSeconds), {
    env: 'OUTBOX_RETENTION_SECONDS',
    unit: 's',
    description: 'how long events, deliveries and inbox rows are kept',
  }),
  retentionIntervalMs: variable(withDefault(10, DEFAULT_RETENTION_INTERVAL_MS), {
    env: 'RETENTION_INTERVAL_MS',
    unit: 'ms',
    description: 'how often retention runs',
  }),
  leaseMs: variable(
    integer(1)
      .pipe(
        z
          .number()
          .min(
            MIN_LEASE_MS,
            `must be at least ${MIN_LEASE_MS} ms: an owner renews its lease every third of it while it waits on the provider`,
          ),
      )
      .default(DEFAULT_LEASE_MS),
    {
      env: 'LEASE_MS',
      unit: 'ms',
      description:
        'how long an owner may stall before its request is taken over (renewed while it lives)',
    },
  ),
  recoveryIntervalMs: variable(withDefault(10, 5_000), {
    env: 'RECOVERY_INTERVAL_MS',
    unit: 'ms',
    description: 'how often the recovery worker sweeps',
  }),
  providerTimeoutMs: variable(withDefault(1, DEFAULT_PROVIDER_TIMEOUT_MS), {
    env: 'PROVIDER_TIMEOUT_MS',
    unit: 'ms',
    description: 'how long one provider call or probe may take',
  }),
  reconciliationIntervalMs: variable(withDefault(10, 60_000), {
    env: 'RECONCILIATION_INTERVAL_MS',
    unit: 'ms',
    description: 'how often unknown outcomes are reconciled',
  }),
  unknownAfterAttempts: variable(withDefault(1, 5), {
    env: 'PROVIDER_UNKNOWN_AFTER_ATTEMPTS',
    description: 'unanswered attempts before an outcome is unknown',
  }),
  providerApplyWindowMs: variable(withDefault(0, DEFAULT_PROVIDER_APPLY_WINDOW_MS), {
    env: 'PROVIDER_APPLY_WINDOW_MS',
    unit: 'ms',
    description: 'how long the provider may still apply a request it received',
  }),
  backoffBaseMs: variable(withDefault(1, 1_000), {
    env: 'RECOVERY_BACKOFF_BASE_MS',
    unit: 'ms',
    description: 'the recovery worker’s first backoff (doubles, capped)',
  }),
  outboxClaimLeaseMs: variable(withDefault(100, 30_000), {
    env: 'OUTBOX_CLAIM_LEASE_MS',
    unit: 'ms',
    description: 'how long a dispatcher holds a claimed delivery (a log cursor at most 5 s)',
  }),
  outboxIntervalMs: variable(withDefault(10, 250), {
    env: 'OUTBOX_INTERVAL_MS',
    unit: 'ms',
    description:
      'outbox poll interval after a partial batch (a full one polls again at once; idle, up to 2 s)',
  }),
  logLevel: variable(z.enum(LOG_LEVELS).default('info'), {
    env: 'LOG_LEVEL',
    description: `pino level: ${LOG_LEVELS.join(', ')}`,
  }),
  logFormat: variable(z.enum(LOG_FORMATS).optional(), {
    env: 'LOG_FORMAT',
    shown: 'pretty on a TTY, else json',
    description: '`json`, or `pretty`: readable lines',
  }),
  rateLimitTenantPerSecond: variable(integer(1).optional(), {
    env: 'RATE_LIMIT_TENANT_PER_SECOND',
    shown: 'unset (off)',
    unit: 'requests/s',
    description: 'a tenant’s requests per second to this process; over it `RATE_LIMITED`',
  }),
  rateLimitTenantBurst: variable(integer(1).optional(), {
    env: 'RATE_LIMIT_TENANT_BURST',
    shown: '2 × the rate',
    unit: 'requests',
    description: 'how many a tenant may send at once',
  }),
  rateLimitUnauthenticatedPerSecond: variable(integer(1).optional(), {
    env: 'RATE_LIMIT_UNAUTHENTICATED_PER_SECOND',
    shown: 'unset (off)',
    unit: 'failures/s',
    description: 'failed authentications per second per client address',
  }),
  services: variable(parsedBy(parseServices).optional(), {
    env: 'SERVICES',
    shown: 'all but those in `SERVICE_URLS`',
    description: 'what this process runs: `all`, or service names ([topology](docs/topology.md))',
  }),
  serviceUrls: variable(
    parsedBy(parseServiceUrls)
      .optional()
      .transform((urls) => urls ?? new Map<ServiceName, string>()),
    {
      env: 'SERVICE_URLS',
      shown: 'none',
      description:
        'services run elsewhere: `name=url,…`, tRPC endpoints ([topology](docs/topology.md))',
    },
  ),
  maxConnections: variable(withDefault(1, DEFAULT_MAX_CONNECTIONS), {
    env: 'MAX_CONNECTIONS',
    description: 'per server; one more is closed at accept',
  }),
  internalPort: variable(integer(0).optional(), {
    env: 'INTERNAL_PORT',
    shown: 'unset: everything on `PORT`',
    description: '`/trpc` and `/metrics` only here; the public port answers 404',
  }),
  internalHost: variable(z.string().default('127.0.0.1'), {
    env: 'INTERNAL_HOST',
    description: 'address `INTERNAL_PORT` binds to',
  }),
  // Each endpoint is a target of its own for the sender: the cap bounds what one tenant can put
  // in front of it, and no merchant needs more than a handful (Stripe allows 16 in test mode).
  webhookEndpointsPerTenant: variable(withDefault(1, 16), {
    env: 'WEBHOOK_ENDPOINTS_PER_TENANT',
    unit: 'endpoints',
    description:
      'webhook endpoints a tenant may have, enabled or disabled; each is a share of the sender',
  }),
  // Unset is decided with DATABASE_URL (config.ts): embedded mode allows loopback, else nothing.
  webhookAllowedHosts: variable(
    parsedBy((raw) => parseWebhookAllowList(raw, 'WEBHOOK_ALLOWED_HOSTS')).optional(),
    {
      env: 'WEBHOOK_ALLOWED_HOSTS',
      shown: 'embedded: loopback; else empty',
      description: 'CIDRs and names webhooks may reach though private (`127.0.0.1/32`)',
    },
  ),
  dataEncryptionKeys: variable(
    parsedBy((raw) => Keyring.parse(raw, 'DATA_ENCRYPTION_KEYS')).optional(),
    {
      env: 'DATA_ENCRYPTION_KEYS',
      shown: 'embedded: generated in `.data/`; else required',
      description: '`id:base64key,…` (32-byte keys): the first encrypts, all decrypt',
    },
  ),
  explorer: variable(flag(true), {
    env: 'EXPLORER',
    description: 'GraphiQL at `GET /graphql` for browsers (`Accept: text/html`); `false`: off',
  }),
  nodeEnv: variable(z.string().optional(), {
    env: 'NODE_ENV',
    // npm start sets it when unset (app/node-env-default.ts); the schema itself has no default.
    shown: 'production',
    description: '`test`/`development`: `DATABASE_URL` without data keys is allowed',
  }),
  faultPoints: variable(z.string().optional(), {
    env: 'FAULT_POINTS',
    shown: 'unset',
    description: 'tests only (`NODE_ENV=test`): `name=crash,…` arms fault points',
  }),
});

/** The variables as the schema reads them; `Config` (config.ts) adds what is derived from them. */
export type ConfigVariables = z.output<typeof configSchema>;

/** Every variable's documentation, in the schema's order. */
export function configVariables(): Array<
  Required<Omit<VariableDoc, 'unit'>> & VariableDoc & { key: string }
> {
  return Object.entries(configSchema.shape).map(([key, schema]) => {
    const doc = docs.get(schema);
    if (doc === undefined) throw new Error(`config field ${key} has no documentation`);
    const shown = doc.shown ?? defaultShown(schema);
    if (shown === undefined)
      throw new Error(`config field ${key} has no default: say what unset means`);
    return { key, ...doc, shown };
  });
}

function defaultShown(schema: z.ZodType): string | undefined {
  return schema instanceof z.ZodDefault ? String(schema.def.defaultValue) : undefined;
}

/** A DATABASE_URL the gateway could not use (a standby's target_session_attrs, a bad port). */
function refuseUnusableDatabaseUrl(value: string, ctx: z.RefinementCtx): void {
  try {
    parseDatabaseUrl(value);
  } catch (error) {
    if (!(error instanceof DatabaseUrlError)) throw error;
    ctx.addIssue({ code: 'custom', message: error.message });
  }
}
