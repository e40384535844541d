import pg from 'pg';
import { startApp, type App, type AppOptions } from '../../src/app.ts';
import {
  startSandboxPsp,
  type SandboxPsp,
  type SandboxPspOptions,
} from '../../sandbox-psp/sandbox-server.ts';
import { upsertTenant } from '../../services/tenants/api-keys.ts';

/** Synthetic test keys: long enough for BOOTSTRAP_TENANTS, obviously not real. */
export const TENANT_A = { name: 'tenant-a', apiKey: 'sk_test_tenant_a_0000000000000000' };
export const TENANT_B = { name: 'tenant-b', apiKey: 'sk_test_tenant_b_0000000000000000' };
export const INTERNAL_TOKEN = 'itok_test_0000000000000000';

export interface TestStack {
  app: App;
  sandbox: SandboxPsp;
  db: pg.Pool;
  tenantIds: { a: string; b: string };
  stop(): Promise<void>;
}

/** The whole stack in this process against a test database: sandbox PSP, services, gateway. */
export async function startTestStack(opts: {
  databaseUrl: string;
  sandbox?: SandboxPspOptions;
  app?: Partial<AppOptions>;
}): Promise<TestStack> {
  const sandbox = await startSandboxPsp({ slowMs: 500, blackholeMs: 1_000, ...opts.sandbox });
  const db = new pg.Pool({ connectionString: opts.databaseUrl, max: 4 });
  const tenantIds = { a: await upsertTenant(db, TENANT_A), b: await upsertTenant(db, TENANT_B) };
  const app = await startApp({
    databaseUrl: opts.databaseUrl,
    pspUrl: sandbox.url,
    internalToken: INTERNAL_TOKEN,
    leaseMs: 5_000,
    ttlSeconds: 86_400,
    recoveryIntervalMs: 60_000,
    providerTimeoutMs: 2_000,
    startRecoveryWorker: false,
    reportError: () => undefined,
    ...opts.app,
  });
  return {
    app,
    sandbox,
    db,
    tenantIds,
    async stop() {
      await app.stop();
      await sandbox.close();
      await db.end();
    },
  };
}

/** Rows the database holds, for "nothing stored" and "exactly one" assertions. */
export async function countRows(
  db: pg.Pool,
  table: 'payments' | 'idempotency_keys' | 'idempotency_phase_log',
): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
  return rows[0]?.n ?? 0;
}
