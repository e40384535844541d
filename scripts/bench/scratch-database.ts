/**
 * The bench's database: a fresh one, migrated, with the baselines' tables, dropped at the end.
 *
 * On a shared server (BENCH_DATABASE_URL, else 127.0.0.1:5432) transaction ids are numbered for
 * the whole server, so other work inflates "writing transactions". `--embedded` (or no server
 * answering) starts a private cluster instead: the embedded binaries with fsync on, so commits
 * cost what they cost, and with pg_stat_statements loaded, so statements can be counted. It is
 * deleted at the end.
 */
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { migrateDatabase } from '../../migrations/migrate.ts';
import {
  externalServer,
  findFreePort,
  startEmbeddedServer,
  withClient,
  type DatabaseServer,
} from '../../services/kernel/db/database-server.ts';
import { sharedServerUrl } from '../../services/kernel/db/scratch-server.ts';
import { BASELINE_SCHEMA } from './baseline-schema.ts';

export interface ScratchDatabase {
  name: string;
  url: string;
  /** 'private': nobody else uses the cluster. */
  cluster: 'shared' | 'private';
  /** pg_stat_statements is loaded and created in the database. */
  statements: boolean;
  /** Drops the database (whoever is still connected) and stops a private cluster. */
  drop(): Promise<void>;
}

/**
 * Loopback connections without a password: pgbench and the systems' pools open connections
 * while they are measured, and SCRAM's key derivation on each would be charged to them. The
 * cluster listens on 127.0.0.1 only and is deleted at the end.
 */
const TRUST_LOOPBACK = 'host all all 127.0.0.1/32 trust\n';

/**
 * A private cluster: started once to turn pg_stat_statements on (a preload needs a restart),
 * then again. `persistent: true` keeps fsync on; the directory is removed by the caller.
 */
async function privateCluster(): Promise<{ server: DatabaseServer; remove: () => Promise<void> }> {
  const dataDir = `/tmp/pgw-bench-cluster-${randomBytes(4).toString('hex')}`;
  const port = await findFreePort();
  const first = await startEmbeddedServer({ dataDir, port, persistent: true });
  await withClient(first.adminUrl, async (c) => {
    await c.query(`ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`);
    await c.query(`ALTER SYSTEM SET pg_stat_statements.track_planning = on`);
  });
  await first.stop();
  await writeFile(join(dataDir, 'pg_hba.conf'), TRUST_LOOPBACK);
  const server = await startEmbeddedServer({ dataDir, port, persistent: true });
  const remove = async () => {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true, maxRetries: 3 });
  };
  return { server, remove };
}

async function openServer(
  embedded: boolean,
): Promise<{ server: DatabaseServer; remove: () => Promise<void>; cluster: 'shared' | 'private' }> {
  const shared = embedded
    ? undefined
    : await sharedServerUrl(process.env['BENCH_DATABASE_URL'] ?? process.env['TEST_DATABASE_URL']);
  if (shared !== undefined) {
    return { server: externalServer(shared), remove: () => Promise.resolve(), cluster: 'shared' };
  }
  return { ...(await privateCluster()), cluster: 'private' };
}

async function loadStatements(url: string): Promise<boolean> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ loaded: boolean }>(
      `SELECT 'pg_stat_statements' = ANY(string_to_array(current_setting('shared_preload_libraries'), ', ')) AS loaded`,
    );
    if (rows[0]?.loaded !== true) return false;
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    return true;
  });
}

export async function createScratchDatabase(opts: { embedded: boolean }): Promise<ScratchDatabase> {
  const { server, remove, cluster } = await openServer(opts.embedded);
  const name = `pgw_bench_${randomBytes(4).toString('hex')}`;
  await withClient(server.adminUrl, (c) => c.query(`CREATE DATABASE ${name}`)).catch(
    async (error: unknown) => {
      await remove();
      throw error;
    },
  );
  const url = server.urlFor(name);
  const drop = async () => {
    try {
      await withClient(server.adminUrl, (c) =>
        c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
      );
    } finally {
      await remove();
    }
  };
  try {
    await migrateDatabase(url);
    await withClient(url, (c) => c.query(BASELINE_SCHEMA));
    const statements = await loadStatements(url);
    return { name, url, cluster, statements, drop };
  } catch (error) {
    await drop();
    throw error;
  }
}

/** The bench's own connections, kept apart from the systems' (see counters.ts). */
export const BENCH_APPLICATION_NAME = 'pgw-bench';

export function benchPool(url: string): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: 2,
    application_name: BENCH_APPLICATION_NAME,
  });
  pool.on('error', () => undefined);
  return pool;
}
