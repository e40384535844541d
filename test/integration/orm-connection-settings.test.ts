import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createOrm, type Orm } from '../../app/orm.ts';
import { ormConnection } from '../../migrations/orm-connection.ts';
import { startSilentServer } from '../support/silent-server.ts';
import { useTestDatabase } from '../support/test-database.ts';

/**
 * The ORM's connections (reads, API-key lookups) and the migrator's keep everything the
 * DATABASE_URL says, as the request pool's do: `options` reach the session, and a URL that
 * requires TLS never gets a connection without it. MikroORM reads only host, port, user,
 * password and database from its options; the rest must reach the driver.
 */
const database = useTestDatabase('orm_connection_settings');
let orm: Orm | undefined;
afterEach(async () => {
  await orm?.close(true);
  orm = undefined;
});

const withParams = (url: string, params: string) =>
  `${url}${url.includes('?') ? '&' : '?'}${params}`;

/** Whether this server takes TLS at all: the tests' servers usually do not. */
async function serverTakesTls(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: withParams(url, 'sslmode=require') });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

const ormOn = (databaseUrl: string) =>
  (orm = createOrm({ databaseUrl, poolMax: 1, applicationName: 'orm-settings-test' }));

describe('the ORM connection keeps the URL’s settings', () => {
  it('sends the URL’s options to the session', async () => {
    const url = withParams(database.url, `options=${encodeURIComponent('-c lock_timeout=4321')}`);
    const rows = await ormOn(url)
      .em.fork()
      .getConnection()
      .execute<Array<{ lock_timeout: string }>>('SHOW lock_timeout');
    expect(rows).toEqual([{ lock_timeout: '4321ms' }]);
  });

  it('never connects without TLS when the URL requires it', async () => {
    const url = withParams(database.url, 'sslmode=require');
    // Asked before the read starts: a refusal that came while this was asked would reject the
    // read before anything awaits it, and the process would report an unhandled rejection.
    const takesTls = await serverTakesTls(database.url);
    const read = ormOn(url)
      .em.fork()
      .getConnection()
      .execute<Array<{ ssl: boolean }>>('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
    if (takesTls) {
      expect(await read).toEqual([{ ssl: true }]);
    } else {
      await expect(read).rejects.toThrow(/does not support SSL/);
    }
  });

  it('hands the driver the URL’s TLS settings, for the migrator’s connection too', () => {
    // migrate.ts connects its ORM with these options: its lock connection (pg's own parser)
    // already refuses a server without TLS, so only a server with TLS could tell the two apart.
    const { driverOptions } = ormConnection(
      'postgresql://migrator@db.internal:5432/payments?sslmode=require',
    );
    expect(driverOptions.connection['ssl']).toBeTruthy();
  });

  it('gives up a connect that gets no answer, as the request pool does', async () => {
    // Within the pools' connect timeout, not knex's own minute for a free connection: the
    // test's timeout, between the two, is what fails if only knex's bound holds.
    const silent = await startSilentServer();
    try {
      const read = ormOn(silent.url).em.fork().getConnection().execute('SELECT 1');
      await expect(read).rejects.toThrow(/timeout/i);
    } finally {
      await silent.stop();
    }
  }, 25_000);
});
