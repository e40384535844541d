/**
 * `npm start`: the whole stack in one process — database (embedded unless DATABASE_URL),
 * migrations, tenants, sandbox provider (unless PSP_URL), internal services and the gateway.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
import { migrateDatabase } from '../migrations/migrate.ts';
import { startSandboxPsp } from '../sandbox-psp/sandbox-server.ts';
import {
  ensureDatabase,
  startEmbeddedServer,
  type DatabaseServer,
} from '../services/kernel/db/database-server.ts';
import { ConfigInvalidError } from '../services/kernel/errors.ts';
import { FaultPoints } from '../services/kernel/faults.ts';
import { generateApiKey, upsertTenant } from '../services/tenants/api-keys.ts';
import { startApp } from './app.ts';
import { loadConfig } from './config.ts';
import { dataKeyring } from './data-keys.ts';

const DATA_DIR = resolve('.data');
/** The embedded PostgreSQL's port: off 5432, so it never collides with a system server. */
const EMBEDDED_PG_PORT = 54329;
const DATABASE_NAME = 'payments';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  // Before the database: a refusal to start must not leave a half-started process behind.
  const dataKeys = dataKeyring(config, { dataDir: DATA_DIR, warn: (line) => console.warn(line) });
  const database = await openDatabase(config.databaseUrl);
  await migrateDatabase(database.url);
  const tenants = await bootstrapTenants(database.url, config.bootstrapTenants);
  const sandbox = config.pspUrl
    ? null
    : await startSandboxPsp({ blackholeMs: config.sandboxBlackholeMs });
  const internalToken = config.internalToken ?? randomBytes(24).toString('base64url');
  const app = await startApp({
    databaseUrl: database.url,
    pspUrl: config.pspUrl ?? sandbox!.url,
    internalToken,
    keyring: dataKeys.keyring,
    host: config.host,
    port: config.port,
    leaseMs: config.leaseMs,
    ttlSeconds: config.idempotencyTtlSeconds,
    metadataRetentionSeconds: config.idempotencyMetadataRetentionSeconds,
    responseMaxBytes: config.idempotencyResponseMaxBytes,
    partitionSeconds: config.idempotencyPartitionSeconds,
    retentionIntervalMs: config.retentionIntervalMs,
    logLevel: config.logLevel,
    recoveryIntervalMs: config.recoveryIntervalMs,
    reconciliationIntervalMs: config.reconciliationIntervalMs,
    unknownAfterAttempts: config.unknownAfterAttempts,
    providerApplyWindowMs: config.providerApplyWindowMs,
    backoffBaseMs: config.backoffBaseMs,
    outboxClaimLeaseMs: config.outboxClaimLeaseMs,
    outboxIntervalMs: config.outboxIntervalMs,
    providerTimeoutMs: config.providerTimeoutMs,
    faults: FaultPoints.fromSpec(config.faultPoints),
  });
  const base = `http://127.0.0.1:${new URL(app.url).port}`;
  console.log(
    [
      `payments gateway ready`,
      `  GraphQL:   ${base}/graphql`,
      `  metrics:   ${base}/metrics`,
      `  tRPC:      ${base}/trpc  (Authorization: Bearer ${config.internalToken ? '<INTERNAL_TOKEN>' : internalToken})`,
      `  database:  ${database.kind === 'embedded' ? `embedded PostgreSQL, data in ${DATA_DIR}` : 'DATABASE_URL'}`,
      `  provider:  ${config.pspUrl ?? `${sandbox!.url} (sandbox, in-process)`}`,
      `  data keys: ${dataKeys.source} (sealing with "${dataKeys.keyring.primaryId}")`,
      ...tenants.map((t) => `  tenant ${t.name}: API key ${t.apiKey}`),
    ].join('\n'),
  );

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

async function openDatabase(
  databaseUrl: string | undefined,
): Promise<{ url: string; kind: string; stop(): Promise<void> }> {
  if (databaseUrl) return { url: databaseUrl, kind: 'external', stop: () => Promise.resolve() };
  mkdirSync(DATA_DIR, { recursive: true });
  const server: DatabaseServer = await startEmbeddedServer({
    dataDir: resolve(DATA_DIR, 'pg'),
    port: EMBEDDED_PG_PORT,
    persistent: true,
  });
  return {
    url: await ensureDatabase(server, DATABASE_NAME),
    kind: 'embedded',
    stop: () => server.stop(),
  };
}

/**
 * BOOTSTRAP_TENANTS, or a demo tenant. The demo key is generated once and kept in .data/, so
 * a restart does not invalidate the key a developer already pasted into curl.
 */
async function bootstrapTenants(
  databaseUrl: string,
  configured: Array<{ name: string; apiKey: string }> | undefined,
): Promise<Array<{ name: string; apiKey: string }>> {
  const tenants = configured ?? [{ name: 'demo', apiKey: demoApiKey() }];
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    for (const tenant of tenants) await upsertTenant(pool, tenant);
  } finally {
    await pool.end();
  }
  return tenants;
}

function demoApiKey(): string {
  const file = resolve(DATA_DIR, 'demo-api-key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(DATA_DIR, { recursive: true });
  const key = generateApiKey();
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}

main().catch((error: unknown) => {
  // A configuration mistake is one line that names the variable; anything else, in full.
  if (error instanceof ConfigInvalidError) console.error(`start failed: ${error.message}`);
  else console.error('start failed:', error);
  process.exit(1);
});
