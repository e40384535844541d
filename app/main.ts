/**
 * `npm start`: the whole stack in one process — database (embedded unless DATABASE_URL),
 * migrations, tenants, sandbox provider (unless PSP_URL), internal services and the gateway.
 */
// First: it sets NODE_ENV before any module below loads graphql-js (node-env-default.ts).
import './node-env-default.ts';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPool } from '../lib/db/pool.ts';
import { isMigrationInterrupted, migrateDatabase } from '../migrations/migrate.ts';
import { startSandboxPsp } from '../sandbox-psp/sandbox-server.ts';
import { ensureDatabase } from '../dev/embedded-postgres/database-server.ts';
import { FAULT_POINT_CATALOG } from './fault-point-catalog.ts';
import { openCheckoutServer } from '../dev/embedded-postgres/embedded-checkout.ts';
import { FaultPoints } from '../lib/faults.ts';
import { generateApiKey, upsertTenant } from '../services/tenants/index.ts';
import { DEFAULT_PROVIDER_MAX_ATTEMPTS, DRAIN_TIMEOUT_MS, startApp } from './app.ts';
import { startProviderService } from './provider-service.ts';
import { untilDatabaseAnswers } from './until-database-answers.ts';
import { startupBanner, type StartupSecret } from './startup-banner.ts';
import { loadConfig, type Config } from './config.ts';
import { topologyOf } from './topology.ts';
import type { RemoteService } from './service-over-http.ts';
import { dataKeyring } from './data-keys.ts';
import { internalToken } from './internal-token.ts';
import { logFormatFor } from '../lib/logging/log-format.ts';
import type { Keyring } from '../lib/crypto/keyring.ts';

const DATA_DIR = resolve('.data');
/**
 * The embedded PostgreSQL's preferred port: off 5432, so it never collides with a system server.
 * Taken by something else (another checkout's server), a free one is used and kept in .data/.
 */
const EMBEDDED_PG_PORT = 54329;
const DATABASE_NAME = 'payments';
/**
 * The explorer bundle beside the built app: dist/explorer when `npm start` runs dist/app/main.js
 * (scripts/build.ts writes both). Run from source there is none, and browsers get a 503.
 */
const EXPLORER_BUNDLE_DIR = fileURLToPath(new URL('../explorer/', import.meta.url));

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const { runs } = topologyOf(config);
  if (runs.size === 1 && runs.has('provider')) return mainOfProvider(config);
  // Before the database: a refusal to start must not leave a half-started process behind.
  const dataKeys = dataKeyring(config, { dataDir: DATA_DIR, warn: (line) => console.warn(line) });
  const token = internalToken(config, { dataDir: DATA_DIR });
  const database = await openDatabase(config.databaseUrl);
  // Migrations run in one transaction and bootstrap upserts: both are safe to run again.
  await untilDatabaseAnswers(() => migrateDatabase(database.url), {
    alsoLost: isMigrationInterrupted,
  });
  // Tenants are the gateway's: a process of payments alone leaves them to it.
  const tenants = runs.has('tenants')
    ? await untilDatabaseAnswers(() =>
        bootstrapTenants(database.url, dataKeys.keyring, config.bootstrapTenants),
      )
    : [];
  // The provider service in a process of its own (SERVICE_URLS) holds the PSP, not this one; a
  // process without payments calls no provider at all.
  const providerServiceUrl = runs.has('payments') ? config.serviceUrls.get('provider') : undefined;
  const paymentsServiceUrl = config.serviceUrls.get('payments');
  // Every URL but the provider's, which has a hop of its own (provider-over-http.ts).
  const serviceUrls = new Map(
    [...config.serviceUrls].filter(
      (entry): entry is [RemoteService, string] =>
        entry[0] !== 'provider' && entry[0] !== 'gateway',
    ),
  );
  const sandbox =
    !runs.has('provider') || config.pspUrl !== undefined ? null : await startSandbox(config);
  const app = await startApp({
    databaseUrl: database.url,
    ...(runs.has('provider') ? { pspUrl: config.pspUrl ?? sandbox!.url } : {}),
    ...(providerServiceUrl === undefined ? {} : { providerServiceUrl }),
    runs,
    serviceUrls,
    internalToken: token.value,
    keyring: dataKeys.keyring,
    host: config.host,
    port: config.port,
    leaseMs: config.leaseMs,
    ttlSeconds: config.idempotencyTtlSeconds,
    metadataRetentionSeconds: config.idempotencyMetadataRetentionSeconds,
    answerMaxBytes: config.idempotencyResponseMaxBytes,
    partitionSeconds: config.idempotencyPartitionSeconds,
    retentionIntervalMs: config.retentionIntervalMs,
    outboxRetentionSeconds: config.outboxRetentionSeconds,
    logLevel: config.logLevel,
    logFormat: logFormatFor(config.logFormat, process.stdout.isTTY),
    recoveryIntervalMs: config.recoveryIntervalMs,
    reconciliationIntervalMs: config.reconciliationIntervalMs,
    unknownAfterAttempts: config.unknownAfterAttempts,
    providerApplyWindowMs: config.providerApplyWindowMs,
    backoffBaseMs: config.backoffBaseMs,
    outboxClaimLeaseMs: config.outboxClaimLeaseMs,
    outboxIntervalMs: config.outboxIntervalMs,
    providerTimeoutMs: config.providerTimeoutMs,
    webhookAllowList: config.webhookAllowList,
    webhookEndpointsPerTenant: config.webhookEndpointsPerTenant,
    faults: FaultPoints.fromSpec(config.faultPoints, FAULT_POINT_CATALOG),
    rateLimits: {
      tenantPerSecond: config.rateLimitTenantPerSecond,
      tenantBurst: config.rateLimitTenantBurst,
      unauthenticatedPerSecond: config.rateLimitUnauthenticatedPerSecond,
    },
    internalPort: config.internalPort,
    internalHost: config.internalHost,
    maxConnections: config.maxConnections,
    explorer: config.explorer,
    explorerBundleDir: EXPLORER_BUNDLE_DIR,
  });
  // Where this process's payments reach a PSP, or where its gateway reaches payments.
  const provider = !runs.has('payments')
    ? `through the payments service at ${paymentsServiceUrl} (SERVICE_URLS)`
    : providerServiceUrl === undefined
      ? (config.pspUrl ?? `${sandbox!.url} (sandbox, in-process)`)
      : `${providerServiceUrl} (provider service, SERVICE_URLS)`;
  if (runs.has('gateway')) {
    const base = `http://127.0.0.1:${new URL(app.url).port}`;
    console.log(
      startupBanner({
        base,
        // With INTERNAL_PORT, tRPC and metrics are only on the internal server, at its own address.
        internalBase: config.internalPort === undefined ? base : app.internalUrl,
        database: database.description,
        provider,
        internalToken: token,
        dataKeys: `${dataKeys.source} (sealing with "${dataKeys.keyring.primaryId}")`,
        explorer: app.explorer,
        webhookLoopbackByDefault: config.webhookLoopbackByDefault,
        tenants,
      }),
    );
  } else {
    // SERVICES without the gateway: its procedures, as SERVICE_URLS gives them to the others.
    const names = [...runs].join(', ');
    console.log(`${names} service${runs.size > 1 ? 's' : ''}: ${app.internalUrl}/trpc`);
    console.log(`  provider: ${provider}`);
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: draining in-flight requests`);
    await app.stop();
    await sandbox?.close();
    await database.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

function startSandbox(config: Config) {
  return startSandboxPsp({
    blackholeMs: config.sandboxBlackholeMs,
    statementLagMs: config.sandboxStatementLagMs,
    keyRetentionMs: secondsToMs(config.sandboxKeyRetentionSeconds),
  });
}

/**
 * SERVICES=provider: the provider service alone, on INTERNAL_PORT behind INTERNAL_TOKEN (both
 * required by the configuration). It holds no database; the PSP is PSP_URL, or a sandbox of
 * its own for a local split.
 */
async function mainOfProvider(config: Config): Promise<void> {
  const sandbox = config.pspUrl === undefined ? await startSandbox(config) : null;
  const service = await startProviderService({
    pspUrl: config.pspUrl ?? sandbox!.url,
    internalToken: config.internalToken!,
    host: config.internalHost,
    port: config.internalPort!,
    providerTimeoutMs: config.providerTimeoutMs,
    providerMaxAttempts: DEFAULT_PROVIDER_MAX_ATTEMPTS,
    logLevel: config.logLevel,
    logFormat: logFormatFor(config.logFormat, process.stdout.isTTY),
    drainTimeoutMs: DRAIN_TIMEOUT_MS,
  });
  console.log(`provider service: ${service.url}`);
  console.log(`  PSP: ${config.pspUrl ?? `${sandbox!.url} (sandbox, in-process)`}`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: draining provider calls in flight`);
    await service.stop();
    await sandbox?.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

async function openDatabase(
  databaseUrl: string | undefined,
): Promise<{ url: string; description: string; stop(): Promise<void> }> {
  if (databaseUrl)
    return { url: databaseUrl, description: 'DATABASE_URL', stop: () => Promise.resolve() };
  // The checkout's own server: already running (reused), or started on a free port; where its
  // cluster lives and its port are recorded in .data/ (lib/db/embedded-checkout.ts).
  const { server, dataDir, port } = await openCheckoutServer({
    stateDir: DATA_DIR,
    preferredPort: EMBEDDED_PG_PORT,
    warn: (line) => console.warn(line),
  });
  return {
    url: await ensureDatabase(server, DATABASE_NAME),
    description: `embedded PostgreSQL on port ${port}, data in ${dataDir}`,
    stop: () => server.stop(),
  };
}

/**
 * BOOTSTRAP_TENANTS, or a demo tenant. The demo key is generated once and kept in .data/, so
 * a restart does not invalidate the key a developer already pasted into curl.
 */
async function bootstrapTenants(
  databaseUrl: string,
  keyring: Keyring,
  configured: Array<{ name: string; apiKey: string }> | undefined,
): Promise<Array<{ name: string; apiKey: StartupSecret }>> {
  const tenants = configured?.map((t) => ({
    name: t.name,
    apiKey: { value: t.apiKey, generatedNow: false },
  })) ?? [{ name: 'demo', apiKey: demoApiKey() }];
  const pool = createPool({
    connectionString: databaseUrl,
    max: 1,
    applicationName: 'payments-start',
  });
  try {
    for (const tenant of tenants)
      await upsertTenant(pool, keyring, { name: tenant.name, apiKey: tenant.apiKey.value });
  } finally {
    await pool.end();
  }
  return tenants;
}

function demoApiKey(): StartupSecret {
  const file = resolve(DATA_DIR, 'demo-api-key');
  if (existsSync(file)) return { value: readFileSync(file, 'utf8').trim(), generatedNow: false };
  mkdirSync(DATA_DIR, { recursive: true });
  const key = generateApiKey();
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return { value: key, generatedNow: true };
}

function secondsToMs(seconds: number | undefined): number | undefined {
  return seconds === undefined ? undefined : seconds * 1_000;
}

/** One line an operator can act on: the reason, and its cause's, without a stack trace. */
function startFailure(error: unknown): string {
  const reasons: string[] = [];
  for (let e: unknown = error; e !== undefined && reasons.length < 4;) {
    reasons.push(e instanceof Error ? e.message : JSON.stringify(e));
    e = e instanceof Error ? e.cause : undefined;
  }
  return `start failed: ${reasons.join(': ')}`;
}

main().catch((error: unknown) => {
  console.error(startFailure(error));
  process.exit(1);
});
