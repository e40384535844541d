import { MikroORM } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATEST_MIGRATION, migrationsList } from '../../migrations/migration-list.ts';
import { withClient } from '../../dev/embedded-postgres/database-server.ts';
import { MigrationDownRefusedError } from '../../lib/errors.ts';
import { useTestDatabase } from '../support/test-database.ts';

const database = useTestDatabase('migrations_append_only');

/** Through MikroORM's own migrator, as an operator's `migrator.down()` would go. */
describe('the migrator refuses to roll back', () => {
  let orm: MikroORM;
  beforeAll(async () => {
    orm = await MikroORM.init({
      clientUrl: database.url,
      entities: [],
      discovery: { warnWhenNoEntities: false },
      extensions: [Migrator],
      migrations: { migrationsList, snapshot: false, transactional: true, silent: true },
      pool: { min: 0, max: 1 },
      debug: false,
    });
  });
  afterAll(async () => {
    await orm.close(true);
  });

  it('down fails with MigrationDownRefusedError and the newest migration stays applied', async () => {
    const failure: unknown = await orm
      .getMigrator()
      .down()
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    // Umzug (under MikroORM's migrator) wraps what `down` threw, naming the migration.
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).cause).toBeInstanceOf(MigrationDownRefusedError);
    expect((failure as Error).message).toContain('append-only');
    const executed = await orm.getMigrator().getExecutedMigrations();
    expect(executed.at(-1)?.name).toBe(LATEST_MIGRATION);
    const column = await withClient(database.url, (client) =>
      client.query(
        `SELECT 1 FROM information_schema.columns
          WHERE table_name = 'idempotency_keys' AND column_name = 'request_hash_key'`,
      ),
    );
    expect(column.rowCount).toBe(1);
  });
});
