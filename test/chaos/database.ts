/**
 * The run's scratch database: created fresh on the test server, migrated once before any
 * gateway starts, dropped at the end of a passing run and kept (its name printed) when the
 * audit fails, so the evidence can be read with psql.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrateDatabase } from '../../migrations/migrate.ts';
import { addPartition } from '../../lib/idempotency/retention.ts';
import { dropPartition, PARTITIONED_TABLES } from '../../lib/idempotency/retention.sql.ts';
import { RETENTION } from './tiers.ts';
import { withClient, type DatabaseServer } from '../../dev/embedded-postgres/database-server.ts';
import { connectionFor } from '../../lib/db/primary-client.ts';
import { isPrimaryLost } from '../../lib/db/primary-finder.ts';
import type { Formation } from '../support/ha-formation.ts';
import { openScratchServer } from '../../dev/embedded-postgres/scratch-server.ts';

export interface ScratchDatabase {
  name: string;
  url: string;
  server: DatabaseServer;
  /** A small pool of the harness's own (application_name chaos-harness, never killed). */
  pool: pg.Pool;
  /** Resolves once a statement runs on the primary (after a failover, it may take a retry). */
  primaryReached(): Promise<void>;
  drop(): Promise<void>;
  /** Closes our pool and, for an embedded server, stops it (the database goes with it). */
  close(): Promise<void>;
}

export async function createScratchDatabase(
  seed: number,
  opts: { formation?: Formation } = {},
): Promise<ScratchDatabase> {
  // The failover tier's formation; else CHAOS_DATABASE_URL or TEST_DATABASE_URL, else
  // 127.0.0.1:5432, else an embedded server.
  const server: DatabaseServer =
    opts.formation === undefined
      ? await openScratchServer(
          process.env['CHAOS_DATABASE_URL'] ?? process.env['TEST_DATABASE_URL'],
          'chaos',
        )
      : formationServer(opts.formation);
  const name = `pgw_chaos_${seed}_${randomBytes(3).toString('hex')}`;
  await withClient(server.adminUrl, (admin) => admin.query(`CREATE DATABASE ${name}`));
  const url = server.urlFor(name);
  await migrateDatabase(url);
  // The harness's own pool follows the primary too (a formation's URL names both nodes).
  const { config, Client } = connectionFor(url, { applicationName: 'chaos-harness' });
  const pool = new pg.Pool({ ...config, Client, max: 4, application_name: 'chaos-harness' });
  pool.on('error', () => undefined);
  await layOutMinutePartitions(pool);
  let closed = false;
  const closePool = async () => {
    if (closed) return;
    closed = true;
    await pool.end();
  };
  return {
    name,
    url,
    server,
    pool,
    async primaryReached() {
      const deadline = Date.now() + PRIMARY_WAIT_MS;
      for (;;) {
        try {
          await pool.query('SELECT 1');
          return;
        } catch (error) {
          if (!isPrimaryLost(error) || Date.now() > deadline) throw error;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      }
    },
    async drop() {
      await closePool();
      await withClient(server.adminUrl, (admin) =>
        admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
      );
    },
    async close() {
      await closePool();
      await server.stop();
    },
  };
}

/** The formation as a server to create the run's database on (the formation stops itself). */
function formationServer(formation: Formation): DatabaseServer {
  return {
    adminUrl: formation.urlFor('postgres'),
    urlFor: (database) => formation.urlFor(database),
    kind: 'external',
    stop: () => Promise.resolve(),
  };
}

/** How long the harness waits for the formation's primary to answer after the faults. */
const PRIMARY_WAIT_MS = 60_000;

/** Minute partitions laid out before the run starts, for the first this-many minutes. */
const LAID_OUT_MINUTES = 5;

/**
 * Replaces the migration's initial partitions (one per table, up to next midnight: every row of
 * a run would land in it) with one-minute partitions around where this run's rows land
 * (now + the replay window), as a gateway with IDEMPOTENCY_PARTITION_SECONDS=60 would have them
 * after running for a while. The gateways' maintenance extends them from there, every minute.
 * The tables are empty: the database was created a moment ago.
 */
async function layOutMinutePartitions(pool: pg.Pool): Promise<void> {
  const { rows } = await pool.query<{ name: string; now: Date }>(
    'SELECT name, now() AS now FROM idempotency_partitions',
  );
  for (const { name } of rows) await pool.query(dropPartition(name));
  await pool.query('DELETE FROM idempotency_partitions');
  const widthMs = RETENTION.partitionSeconds * 1000;
  const landing = (rows[0]?.now.getTime() ?? Date.now()) + RETENTION.ttlSeconds * 1000;
  const first = Math.floor(landing / widthMs) * widthMs - widthMs;
  for (const parent of PARTITIONED_TABLES) {
    for (let i = 0; i <= LAID_OUT_MINUTES; i++) {
      const lower = new Date(first + i * widthMs);
      await addPartition(pool, { parent, lower, upper: new Date(lower.getTime() + widthMs) });
    }
  }
}
