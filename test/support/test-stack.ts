import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { startApp, type App, type AppOptions } from '../../app/app.ts';
import {
  startSandboxPsp,
  type SandboxPsp,
  type SandboxPspOptions,
} from '../../sandbox-psp/sandbox-server.ts';
import { Keyring } from '../../lib/crypto/keyring.ts';
import { upsertTenant } from '../../services/tenants/api-keys.ts';
import { parseWebhookAllowList } from '../../services/notifications/webhook-url.policy.ts';
import { graphql, type GraphQLAnswer } from './graphql-client.ts';
import { CREATE_PAYMENT } from './operations.ts';
import { useTestDatabase } from './test-database.ts';

/** Synthetic test keys: long enough for BOOTSTRAP_TENANTS, obviously not real. */
export const TENANT_A = { name: 'tenant-a', apiKey: 'sk_test_tenant_a_0000000000000000' };
export const TENANT_B = { name: 'tenant-b', apiKey: 'sk_test_tenant_b_0000000000000000' };
export const INTERNAL_TOKEN = 'itok_test_0000000000000000';
/**
 * Tests' webhook receivers listen on 127.0.0.1, which the webhook policy refuses: the stacks
 * allow it by configuration, as a developer would (WEBHOOK_ALLOWED_HOSTS), never by a looser check.
 */
export const TEST_WEBHOOK_ALLOWED_HOSTS = '127.0.0.1/32';

/**
 * A synthetic data key (32 bytes of 0x11), deterministic so a failed run can be reproduced and
 * its database read back; DATA_ENCRYPTION_KEYS for gateway processes, and the test stack's
 * keyring. Obviously not a real key.
 */
export const TEST_DATA_ENCRYPTION_KEYS = `test1:${Buffer.alloc(32, 0x11).toString('base64')}`;

/** The keyring of TEST_DATA_ENCRYPTION_KEYS, or of another `id:base64key,…` list. */
export function testKeyring(spec = TEST_DATA_ENCRYPTION_KEYS): Keyring {
  return Keyring.parse(spec);
}

export interface TestStack {
  app: App;
  sandbox: SandboxPsp;
  db: pg.Pool;
  tenantIds: { a: string; b: string };
  /** What the app reported as unexpected (an INTERNAL_SERVER_ERROR's cause), for failure messages. */
  errors: unknown[];
  stop(): Promise<void>;
}

/** What a test changes of the stack's defaults: the sandbox's timings, the app's options. */
export interface TestStackOptions {
  sandbox?: SandboxPspOptions;
  app?: Partial<AppOptions>;
}

/** The whole stack in this process against a test database: sandbox PSP, services, gateway. */
export async function startTestStack(
  opts: TestStackOptions & { databaseUrl: string },
): Promise<TestStack> {
  const sandbox = await startSandboxPsp({ slowMs: 500, blackholeMs: 1_000, ...opts.sandbox });
  const db = new pg.Pool({ connectionString: opts.databaseUrl, max: 4 });
  // The app's keyring: the keys' HMACs are made under the data keys it authenticates with.
  const keyring = opts.app?.keyring ?? testKeyring();
  const tenantIds = {
    a: await upsertTenant(db, keyring, TENANT_A),
    b: await upsertTenant(db, keyring, TENANT_B),
  };
  const errors: unknown[] = [];
  const app = await startApp({
    databaseUrl: opts.databaseUrl,
    pspUrl: sandbox.url,
    internalToken: INTERNAL_TOKEN,
    keyring,
    leaseMs: 5_000,
    ttlSeconds: 86_400,
    recoveryIntervalMs: 60_000,
    providerTimeoutMs: 2_000,
    startRecoveryWorker: false,
    reportError: (error) => errors.push(error),
    logLevel: 'silent',
    webhookAllowList: parseWebhookAllowList(TEST_WEBHOOK_ALLOWED_HOSTS),
    ...opts.app,
  });
  return {
    app,
    sandbox,
    db,
    tenantIds,
    errors,
    async stop() {
      await app.stop();
      await sandbox.close();
      await db.end();
    },
  };
}

/**
 * A stack for the enclosing file (or describe block) on `database`: started before its tests,
 * stopped after them. Two stacks may share one database, to compare two configurations over the
 * same rows. The handle reads through to the running stack, so read it inside hooks and tests,
 * not at module level (the stack does not exist yet there).
 */
export function useTestStackOn(
  database: { readonly url: string },
  options: TestStackOptions = {},
): TestStack {
  let running: TestStack | undefined;
  beforeAll(async () => {
    running = await startTestStack({ ...options, databaseUrl: database.url });
  });
  afterAll(async () => {
    await running?.stop();
  });
  const current = (): TestStack => {
    if (running === undefined) {
      throw new Error('useTestStackOn: no stack running (read before its beforeAll, or stopped)');
    }
    return running;
  };
  return {
    get app() {
      return current().app;
    },
    get sandbox() {
      return current().sandbox;
    },
    get db() {
      return current().db;
    },
    get tenantIds() {
      return current().tenantIds;
    },
    get errors() {
      return current().errors;
    },
    /** Stops it early; the file's afterAll then has nothing left to stop. */
    async stop() {
      const stack = current();
      running = undefined;
      await stack.stop();
    },
  };
}

/** useTestStackOn a test database of the file's own (useTestDatabase(label)). */
export function useTestStack(label: string, options: TestStackOptions = {}): TestStack {
  return useTestStackOn(useTestDatabase(label), options);
}

/** Rows the database holds, for "nothing stored" and "exactly one" assertions. */
export async function countRows(
  db: pg.Pool,
  table: 'payments' | 'idempotency_keys' | 'idempotency_phase_log',
): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
  return rows[0]?.n ?? 0;
}

/** A createPayment input whose key is also its reference, so charges can be counted by key. */
export function paymentInput(
  key: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    idempotencyKey: key,
    amount: '10.00',
    currency: 'EUR',
    paymentMethod: 'pm_card_visa',
    reference: key,
    ...overrides,
  };
}

/** createPayment as a merchant's backend sends it (tenant A unless told otherwise). */
export function createPaymentOn(
  stack: TestStack,
  input: Record<string, unknown>,
  apiKey = TENANT_A.apiKey,
): Promise<GraphQLAnswer> {
  return graphql(stack.app.url, { apiKey, query: CREATE_PAYMENT, variables: { input } });
}

/** The idempotency row of a key (every column, plus whether its lease has expired). */
export async function keyRowOf(
  db: pg.Pool,
  key: string,
): Promise<Record<string, unknown> | undefined> {
  const { rows } = await db.query<Record<string, unknown>>(
    `SELECT *, lease_expires_at <= now() AS lease_expired FROM idempotency_keys WHERE key = $1
      ORDER BY expires_at DESC LIMIT 1`,
    [key],
  );
  return rows[0];
}

/**
 * An operator (alice) resolving tenant A's createPayment `key` by hand as not charged, by
 * mistake: for tests that it is refused unless the request's outcome is unknown.
 */
export function resolveByHandAsNotCharged(stack: TestStack, key: string) {
  return stack.app.services.client.ops.resolve.mutate({
    tenantId: stack.tenantIds.a,
    operation: 'payments.create.v1',
    key,
    actor: 'alice',
    reason: 'mistake',
    outcome: 'not_charged',
  });
}
