import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { migrateDatabase } from '../../migrations/migrate.ts';
import { LATEST_MIGRATION } from '../../migrations/migration-list.ts';
import {
  EmbeddedPostgresUnusableError,
  ensureDatabase,
  findFreePort,
  sqlState,
  startEmbeddedServer,
  withClient,
} from '../../dev/embedded-postgres/database-server.ts';
import { cloneDatabase, createTestDatabase, useTestDatabase } from '../support/test-database.ts';
import type { TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';

const MIGRATED_TABLES = ['idempotency_keys', 'idempotency_phase_log', 'payments', 'tenants'];

/** The server's own wait for sessions to leave a template before failing with 55006. */
const SERVER_TEMPLATE_WAIT_MS = 5_000;
/** The test's bound: the server's wait, the hold past it, and the clone's retries. */
const RETRY_TEST_TIMEOUT_MS = 4 * (SERVER_TEMPLATE_WAIT_MS + 1_000);
/** initdb + start + migrate + stop of a throwaway cluster; seconds, but slow CI disks vary. */
const EMBEDDED_TEST_TIMEOUT_MS = 120_000;

async function tablesOf(url: string): Promise<string[]> {
  return withClient(url, async (client) => {
    const result = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
    );
    return result.rows.map((row) => row.table_name);
  });
}

async function appliedMigrations(url: string): Promise<string[]> {
  return withClient(url, async (client) => {
    const result = await client.query<{ name: string }>('SELECT name FROM mikro_orm_migrations');
    return result.rows.map((row) => row.name);
  });
}

async function tenantNames(url: string): Promise<string[]> {
  return withClient(url, async (client) => {
    const result = await client.query<{ name: string }>('SELECT name FROM tenants ORDER BY name');
    return result.rows.map((row) => row.name);
  });
}

describe('test databases cloned from the migrated template', () => {
  const fileDatabase = useTestDatabase('test_database');
  const created: TestDatabase[] = [];
  const create = async (label: string): Promise<TestDatabase> => {
    const database = await createTestDatabase(label);
    created.push(database);
    return database;
  };
  afterAll(async () => {
    await Promise.all(created.map((database) => database.drop()));
  });

  test('useTestDatabase provides a migrated database', async () => {
    expect(await tablesOf(fileDatabase.url)).toEqual(expect.arrayContaining(MIGRATED_TABLES));
  });

  test('two databases are distinct and both fully migrated', async () => {
    const [a, b] = await Promise.all([create('isolation_a'), create('isolation_b')]);
    expect(a.name).not.toBe(b.name);
    for (const database of [a, b]) {
      const tables = await tablesOf(database.url);
      expect(tables).toEqual(expect.arrayContaining([...MIGRATED_TABLES, 'mikro_orm_migrations']));
      expect(await appliedMigrations(database.url)).toContain(LATEST_MIGRATION);
      const current = await withClient(database.url, (c) =>
        c.query<{ db: string }>('SELECT current_database() AS db'),
      );
      expect(current.rows[0]?.db).toBe(database.name);
    }
  });

  test('a row written in one database is not visible in another', async () => {
    const [a, b] = await Promise.all([create('rows_a'), create('rows_b')]);
    await withClient(a.url, (client) =>
      client.query(
        `INSERT INTO tenants (id, name, api_key_hash) VALUES (gen_random_uuid(), 'only-in-a', '\\x00')`,
      ),
    );
    expect(await tenantNames(a.url)).toEqual(['only-in-a']);
    expect(await tenantNames(b.url)).toEqual([]);
  });

  // On PostgreSQL 15+ concurrent clones of one template do not conflict at all; this guards
  // against a harness change (or older server) that makes them do so.
  test('six concurrent clones all succeed', async () => {
    const databases = await Promise.all(
      Array.from({ length: 6 }, (_, i) => create(`concurrent_${i}`)),
    );
    expect(new Set(databases.map((database) => database.name)).size).toBe(6);
    for (const database of databases) expect(await tablesOf(database.url)).toContain('payments');
  });

  // A private template, so holding a session on it does not stall the other test files' clones.
  test(
    'a clone retries while a session holds the template past the server wait (55006)',
    { timeout: RETRY_TEST_TIMEOUT_MS },
    async () => {
      const source = await create('retry_source');
      const adminUrl = inject('pgwAdminUrl');
      // The holder stays on the template until the unretried clone has given up, however long
      // that takes on a loaded machine; then it leaves, and the retrying clone gets through.
      let leave!: () => void;
      const left = new Promise<void>((resolve) => (leave = resolve));
      const holding = withClient(source.url, async (client) => {
        await client.query("SELECT 'holding the template'");
        await left;
      });
      await waitUntil(
        () =>
          withClient(adminUrl, async (admin) => {
            const { rowCount } = await admin.query(
              `SELECT 1 FROM pg_stat_activity WHERE datname = $1`,
              [source.name],
            );
            return rowCount === 1;
          }),
        {
          timeoutMs: 10_000,
          intervalMs: 20,
          what: 'the holder to be in its session on the template',
        },
      );

      const started = Date.now();
      const unretrying = withClient(adminUrl, (admin) =>
        admin.query(
          `CREATE DATABASE ${admin.escapeIdentifier(`${source.name}_x`)} TEMPLATE ${admin.escapeIdentifier(source.name)}`,
        ),
      );
      void unretrying.then(leave, leave);
      const [unretried, clone] = await Promise.allSettled([
        unretrying,
        cloneDatabase({ adminUrl: adminUrl, template: source.name, label: 'retry_clone' }),
      ]);
      await holding;

      expect(unretried.status).toBe('rejected');
      expect(unretried.status === 'rejected' && sqlState(unretried.reason)).toBe('55006');
      expect(clone.status).toBe('fulfilled');
      expect(Date.now() - started).toBeGreaterThan(SERVER_TEMPLATE_WAIT_MS);
      if (clone.status === 'fulfilled') {
        created.push(clone.value);
        expect(await tablesOf(clone.value.url)).toContain('payments');
      }
    },
  );
});

describe('startEmbeddedServer', () => {
  test(
    'starts a throwaway cluster that takes the migrations',
    { timeout: EMBEDDED_TEST_TIMEOUT_MS },
    async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'pgw-embedded-test-'));
      try {
        const server = await startEmbeddedServer({
          dataDir,
          port: await findFreePort(),
          persistent: false,
        });
        try {
          expect(server.kind).toBe('embedded');
          const url = await ensureDatabase(server, 'pgw_embedded_check');
          expect(await ensureDatabase(server, 'pgw_embedded_check')).toBe(url); // idempotent
          await migrateDatabase(url);
          expect(await tablesOf(url)).toEqual(expect.arrayContaining(MIGRATED_TABLES));
          expect(await appliedMigrations(url)).toContain(LATEST_MIGRATION);
          const settings = await withClient(url, (client) =>
            client.query<{ listen: string; encoding: string }>(
              `SELECT current_setting('listen_addresses') AS listen, current_setting('server_encoding') AS encoding`,
            ),
          );
          expect(settings.rows[0]).toEqual({ listen: '127.0.0.1', encoding: 'UTF8' });
        } finally {
          await server.stop();
        }
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  );

  // As root the server runs as `postgres`, who cannot enter a directory private to root.
  test.runIf(process.getuid?.() === 0)(
    'refuses, in one line saying what to do, a data directory the postgres user cannot reach',
    { timeout: EMBEDDED_TEST_TIMEOUT_MS },
    async () => {
      const privateDir = await mkdtemp(join(tmpdir(), 'pgw-embedded-private-'));
      try {
        await chmod(privateDir, 0o700);
        const started = startEmbeddedServer({
          dataDir: join(privateDir, 'pg'),
          port: await findFreePort(),
          persistent: false,
        });
        const error = await started.then(
          () => undefined,
          (reason: unknown) => reason,
        );
        expect(error).toBeInstanceOf(EmbeddedPostgresUnusableError);
        const message = (error as Error).message;
        expect(message).toContain(privateDir);
        expect(message).toContain('DATABASE_URL');
        expect(message).not.toContain('\n');
        expect(await readdir(privateDir)).toEqual([]); // nothing initialised, nothing left
      } finally {
        await rm(privateDir, { recursive: true, force: true });
      }
    },
  );
});
