import { MikroORM } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { connectionFor } from '../lib/db/primary-client.ts';
import { migrationsList } from './migration-list.ts';
import { ormConnection } from './orm-connection.ts';

/** Any constant shared by every process of this project: it serialises concurrent migrators. */
const MIGRATION_ADVISORY_LOCK_ID = 0x70_61_79_6d; // "paym"

/**
 * knex's words for a statement sent in a transaction that had already ended. When the
 * migrator's connection fails mid-run, knex rolls its transaction back and reports the
 * migrator's next statement this way, hiding the lost connection underneath. The run is
 * transactional and all or nothing, so nothing of it was applied, and it may simply run again.
 */
const TRANSACTION_ENDED = /^Transaction query already complete/;

/** A migration run that a lost connection cut short: nothing applied, safe to run again. */
export function isMigrationInterrupted(error: unknown): boolean {
  return error instanceof Error && TRANSACTION_ENDED.test(error.message);
}

/**
 * Brings the database at `databaseUrl` to the newest schema, or only as far as migration `to`
 * (a name from migration-list.ts: the tests of a migration build the schema it starts from).
 * Safe to call from several processes at once: a session-level advisory lock makes the others
 * wait, then find nothing left to run.
 */
export async function migrateDatabase(
  databaseUrl: string,
  options: { to?: string } = {},
): Promise<void> {
  // On a URL with several hosts the lock's connection finds the primary, and the migrator
  // follows it there: migrations run on the primary, or not at all.
  const { config, Client } = connectionFor(databaseUrl, { applicationName: 'payments-migrate' });
  const lock = new Client(config);
  lock.on('error', () => undefined);
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_ADVISORY_LOCK_ID]);
    const orm = await MikroORM.init({
      // No statement timeout, whatever the URL's options set: a migration may rewrite a table.
      ...ormConnection(databaseUrl, { host: lock.host, port: lock.port }, { statement_timeout: 0 }),
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
      await orm.getMigrator().up(options.to === undefined ? undefined : { to: options.to });
    } finally {
      await orm.close(true);
    }
  } finally {
    await lock.end();
  }
}
