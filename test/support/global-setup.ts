import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrateDatabase } from '../../migrations/migrate.ts';
import { migrationsList } from '../../migrations/migration-list.ts';
import { ensureTestPartitions } from './test-partitions.ts';
import {
  externalServer,
  findFreePort,
  isServerAnswering,
  sqlState,
  startEmbeddedServer,
} from '../../dev/embedded-postgres/database-server.ts';
import type { DatabaseServer } from '../../dev/embedded-postgres/database-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the maintenance database of the server the tests use. */
    pgwAdminUrl: string;
    /** The migrated template every test database is cloned from. */
    pgwTemplateDatabase: string;
    /** An embedded server is deleted at the end of the run, with any database kept on it. */
    pgwServerKind: 'external' | 'embedded';
  }
}

/**
 * Environment:
 * - TEST_DATABASE_URL: use this server (any database on it); fail rather than fall back.
 * - PGW_TEST_FORCE_EMBEDDED=1: skip the local server and start an embedded one, to prove the
 *   fallback a machine without PostgreSQL takes.
 * - PGUSER: role for the local server on 127.0.0.1:5432 (default root, then postgres).
 */
const LOCAL_SERVER = '127.0.0.1:5432';

/** A local server answers a loopback connect in milliseconds; a second means none is there. */
const LOCAL_PROBE_TIMEOUT_MS = 1_000;
/** An explicitly configured server may be remote (CI service container still warming up). */
const EXPLICIT_PROBE_TIMEOUT_MS = 10_000;

/** Hex digits of the schema hash in the template name: enough to tell schema versions apart. */
const TEMPLATE_HASH_HEX_CHARS = 8;
/** Serialises template builds across concurrent runs sharing one server. Any fixed bigint. */
const TEMPLATE_BUILD_LOCK_ID = 0x70_67_77_74; // "pgwt"

const SQLSTATE_OBJECT_IN_USE = '55006';
const SQLSTATE_UNDEFINED_DATABASE = '3D000';
const SQLSTATE_DUPLICATE_DATABASE = '42P04';

interface ChosenServer {
  server: DatabaseServer;
  description: string;
  release: () => Promise<void>;
}

async function startThrowawayServer(reason: string): Promise<ChosenServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'pgw-test-pg-'));
  const port = await findFreePort();
  const started = Date.now();
  try {
    const server = await startEmbeddedServer({ dataDir, port, persistent: false });
    const release = async (): Promise<void> => {
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    };
    return {
      server,
      description: `embedded on port ${port} (${reason}), started in ${Date.now() - started} ms`,
      release,
    };
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

async function chooseServer(): Promise<ChosenServer> {
  const release = (): Promise<void> => Promise.resolve();
  const explicitUrl = process.env.TEST_DATABASE_URL;
  if (explicitUrl) {
    if (!(await isServerAnswering(explicitUrl, EXPLICIT_PROBE_TIMEOUT_MS))) {
      throw new Error('TEST_DATABASE_URL is set but that server does not answer');
    }
    const { host } = new URL(explicitUrl);
    return {
      server: externalServer(explicitUrl),
      description: `external ${host} (TEST_DATABASE_URL)`,
      release,
    };
  }
  if (process.env.PGW_TEST_FORCE_EMBEDDED === '1')
    return startThrowawayServer('PGW_TEST_FORCE_EMBEDDED=1');

  const users = [...new Set([process.env.PGUSER ?? 'root', 'postgres'])];
  for (const user of users) {
    const url = `postgres://${encodeURIComponent(user)}@${LOCAL_SERVER}/postgres`;
    if (await isServerAnswering(url, LOCAL_PROBE_TIMEOUT_MS)) {
      return {
        server: externalServer(url),
        description: `external ${LOCAL_SERVER} as ${user}`,
        release,
      };
    }
  }
  return startThrowawayServer(`nothing answered on ${LOCAL_SERVER}`);
}

/**
 * Every run keeps one session open under this name for its lifetime; the process dying closes
 * it. It is how a starting run sees that another run is live on the same server.
 */
const RUN_APPLICATION_NAME = 'pgw-test-run';

async function openRunSession(adminUrl: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: adminUrl,
    application_name: RUN_APPLICATION_NAME,
  });
  // An embedded server stopped at teardown cuts this session; unheard, that would crash vitest.
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

async function otherLiveRuns(admin: pg.Client): Promise<number> {
  const result = await admin.query<{ runs: number }>(
    'SELECT count(*)::int AS runs FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()',
    [RUN_APPLICATION_NAME],
  );
  return result.rows[0]?.runs ?? 0;
}

/**
 * Databases of earlier runs: kept on purpose after a failure, or orphaned by a killed run.
 * Only called when no other run is live: a live run's database has no session between its
 * tests, so "not in use" would not protect it. One in use anyway (being inspected) cannot be
 * dropped without FORCE and is left alone. `_` is a LIKE wildcard, hence the escapes: an
 * unescaped 'pgw_t_%' would also match the templates ('pgw_tpl_...').
 */
async function dropLeftoverTestDatabases(admin: pg.Client): Promise<string> {
  const leftovers = await admin.query<{ datname: string }>(
    String.raw`SELECT datname FROM pg_database WHERE datname LIKE 'pgw\_t\_%'`,
  );
  let dropped = 0;
  let inUse = 0;
  for (const { datname } of leftovers.rows) {
    try {
      await admin.query(`DROP DATABASE ${admin.escapeIdentifier(datname)}`);
      dropped += 1;
    } catch (error) {
      const state = sqlState(error);
      if (state === SQLSTATE_OBJECT_IN_USE) inUse += 1;
      else if (state !== SQLSTATE_UNDEFINED_DATABASE) throw error; // gone: someone beat us to it
    }
  }
  return `removed ${dropped} leftover test databases${inUse > 0 ? `, kept ${inUse} in use` : ''}`;
}

/** Hash of every migration's name and SQL: a schema change must never reuse an old template. */
async function schemaHash(): Promise<string> {
  const hash = createHash('sha256');
  for (const { name } of migrationsList) {
    const file = new URL(`../../migrations/${name}.sql`, import.meta.url);
    hash.update(`${name}\0${await readFile(file, 'utf8')}\0`);
  }
  return hash.digest('hex').slice(0, TEMPLATE_HASH_HEX_CHARS);
}

async function dropDatabase(admin: pg.Client, name: string): Promise<void> {
  const quoted = admin.escapeIdentifier(name);
  // A template cannot be dropped until it is demoted.
  await admin.query(`ALTER DATABASE ${quoted} IS_TEMPLATE false`);
  await admin.query(`DROP DATABASE ${quoted} WITH (FORCE)`);
}

/**
 * Returns the name of the migrated template for the current schema, building it if needed.
 * Crash-safe: it is built under a temporary name and renamed only once complete and marked
 * IS_TEMPLATE, so the final name never denotes a half-migrated database. Race-safe: builders
 * on one server queue on an advisory lock, and a rename that loses anyway (42P04) yields to
 * the winner's identical template.
 */
async function ensureTemplate(server: DatabaseServer, admin: pg.Client): Promise<string> {
  const name = `pgw_tpl_${await schemaHash()}`;
  await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_BUILD_LOCK_ID]);
  try {
    const existing = await admin.query<{ ready: boolean }>(
      'SELECT datistemplate AS ready FROM pg_database WHERE datname = $1',
      [name],
    );
    if (existing.rows[0]?.ready === true) return name;
    // Not made by this protocol (e.g. created by hand): its content is unknown.
    if (existing.rows[0] !== undefined) await dropDatabase(admin, name);

    // Builds of a killed run; nobody else builds while we hold the lock.
    const stale = await admin.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
      [`${name}_build_`],
    );
    for (const { datname } of stale.rows) await dropDatabase(admin, datname);

    const buildName = `${name}_build_${randomBytes(4).toString('hex')}`;
    const build = admin.escapeIdentifier(buildName);
    await admin.query(`CREATE DATABASE ${build}`);
    await migrateDatabase(server.urlFor(buildName));
    await ensureTestPartitions(server.urlFor(buildName));
    await admin.query(`ALTER DATABASE ${build} IS_TEMPLATE true`);
    try {
      await admin.query(`ALTER DATABASE ${build} RENAME TO ${admin.escapeIdentifier(name)}`);
    } catch (error) {
      if (sqlState(error) !== SQLSTATE_DUPLICATE_DATABASE) throw error;
      await dropDatabase(admin, buildName);
    }
    return name;
  } finally {
    await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_BUILD_LOCK_ID]);
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const chosen = await chooseServer();
  console.log(`test database server: ${chosen.description}`);
  let admin: pg.Client | undefined;
  const teardown = async (): Promise<void> => {
    await admin?.end().catch(() => undefined);
    await chosen.release();
  };
  try {
    admin = await openRunSession(chosen.server.adminUrl);
    const others = await otherLiveRuns(admin);
    const cleanup =
      others > 0
        ? `leftover cleanup skipped (${others} other test runs live on this server)`
        : await dropLeftoverTestDatabases(admin);
    const started = Date.now();
    const template = await ensureTemplate(chosen.server, admin);
    console.log(
      `test databases: ${cleanup}; template ${template} ready in ${Date.now() - started} ms`,
    );
    project.provide('pgwAdminUrl', chosen.server.adminUrl);
    project.provide('pgwTemplateDatabase', template);
    project.provide('pgwServerKind', chosen.server.kind);
  } catch (error) {
    await teardown();
    throw error;
  }
  return teardown;
}
