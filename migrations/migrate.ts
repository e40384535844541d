import { MikroORM } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import pg from 'pg';
import { migrationsList } from './migration-list.ts';
import { ormConnection } from './orm-connection.ts';

/** Any constant shared by every process of this project: it serialises concurrent migrators. */
const MIGRATION_ADVISORY_LOCK_ID = 0x70_61_79_6d; // "paym"

/**
 * Brings the database at `databaseUrl` to the newest schema. Safe to call from several
 * processes at once: a session-level advisory lock makes the others wait, then find nothing
 * left to run.
 */
export async function migrateDatabase(databaseUrl: string): Promise<void> {
  const lock = new pg.Client({ connectionString: databaseUrl });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_ADVISORY_LOCK_ID]);
    const orm = await MikroORM.init({
      ...ormConnection(databaseUrl),
      entities: [],
      discovery: { warnWhenNoEntities: false },
      extensions: [Migrator],
      migrations: {
        migrationsList,
        snapshot: false,
        transactional: true,
        allOrNothing: true,
        silent: true,
      },
      pool: { min: 0, max: 1 },
      debug: false,
    });
    try {
      await orm.getMigrator().up();
    } finally {
      await orm.close(true);
    }
  } finally {
    await lock.end();
  }
}
