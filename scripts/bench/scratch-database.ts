/**
 * The bench's database: a fresh one, migrated, with the baselines' tables, dropped at the end,
 * on BENCH_DATABASE_URL's server, else the one on 127.0.0.1:5432, else a throwaway embedded
 * one (dev/embedded-postgres/scratch-server.ts). On a shared server transaction ids are
 * numbered for the whole server, so other work inflates "writes" (the report says when).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrateDatabase } from '../../migrations/migrate.ts';
import { SELECT_AUTOVACUUM } from '../../lib/db/autovacuum-check.ts';
import { withClient } from '../../dev/embedded-postgres/database-server.ts';
import { openScratchServer } from '../../dev/embedded-postgres/scratch-server.ts';
import { BASELINE_SCHEMA } from './baseline-schema.ts';

/** The bench's own connections, kept apart from the systems' (see phase-costs.ts). */
export const BENCH_APPLICATION_NAME = 'pgw-bench';

export interface ScratchDatabase {
  name: string;
  url: string;
  /** Drops the database (whoever is still connected) and stops an embedded server. */
  drop(): Promise<void>;
}

export async function createScratchDatabase(): Promise<ScratchDatabase> {
  const configured = process.env['BENCH_DATABASE_URL'] ?? process.env['TEST_DATABASE_URL'];
  const server = await openScratchServer(configured, 'bench');
  const name = `pgw_bench_${randomBytes(4).toString('hex')}`;
  await withClient(server.adminUrl, (c) => c.query(`CREATE DATABASE ${name}`)).catch(
    async (error: unknown) => {
      await server.stop();
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
      await server.stop();
    }
  };
  try {
    await migrateDatabase(url);
    await withClient(url, (c) => c.query(BASELINE_SCHEMA));
    return { name, url, drop };
  } catch (error) {
    await drop();
    throw error;
  }
}

export function benchPool(url: string): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: 2,
    application_name: BENCH_APPLICATION_NAME,
  });
  pool.on('error', () => undefined);
  return pool;
}

/**
 * Statistics for what the warm-up wrote, gathered as autovacuum would have gathered them. Where
 * the server runs with autovacuum off (some test servers do), no table is ever analyzed, and a
 * prepared statement's generic plan, made on a connection's sixth call while the tables were
 * still empty, is never replaced: every index whose first column is tenant_id then costs the
 * same, and the product's outcome UPDATE (WHERE tenant_id = $1 AND id = $2) was planned on
 * payments_tenant_created_ix and read every payment of the bench's tenant on each call
 * (docs/decisions/0006-pipelined-statements-on-pg-internals.md). ANALYZE invalidates every
 * session's cached plans, so each system plans again with statistics, as it would in production
 * a minute after its first rows. Returns the server's autovacuum setting, for the report.
 */
export async function analyzeAfterWarmUp(db: pg.Pool): Promise<string> {
  await db.query('ANALYZE');
  const { rows } = await db.query<{ enabled: boolean }>(SELECT_AUTOVACUUM);
  return rows[0]?.enabled === true ? 'on' : 'off';
}
