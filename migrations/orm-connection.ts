import type pg from 'pg';
import { parseDatabaseUrl, type Endpoint } from '../lib/db/database-url.ts';

/**
 * MikroORM's connection options for a libpq-style URL. MikroORM parses `clientUrl` with the WHATWG
 * URL parser, which refuses forms libpq and `pg` accept (a unix socket as
 * `postgresql://user@/db?host=/var/run/postgresql`, several hosts), so the URL is parsed the way
 * `pg` parses it and handed over as discrete fields. For a URL with several hosts, `endpoint`
 * says which one (the primary, found by the caller); without it the first is named, and the
 * caller must replace it (app/orm.ts does, per connection).
 *
 * The discrete fields are all MikroORM itself reads. The rest of what the URL says (`sslmode`
 * and its certificates, `options`, `connect_timeout`) goes to the driver whole, as
 * `driverOptions.connection`, with `session` on top: without it the ORM's connections would
 * quietly drop TLS that the URL requires, while the request pool's kept it.
 */
export function ormConnection(
  databaseUrl: string,
  endpoint?: Endpoint,
  session: Record<string, unknown> = {},
): {
  host?: string;
  port?: number;
  user?: string;
  password?: string;
  dbName?: string;
  driverOptions: { connection: Record<string, unknown> };
} {
  const url = parseDatabaseUrl(databaseUrl);
  const parsed: pg.ClientConfig = url.configFor(endpoint ?? url.endpoints[0]!);
  // What the URL leaves out stays out of the driver's copy: an empty password or port there
  // would replace the discrete fields above.
  const given = Object.fromEntries(
    Object.entries(parsed).filter(
      ([, value]) => value !== undefined && value !== null && value !== '',
    ),
  );
  return {
    ...(parsed.host ? { host: parsed.host } : {}),
    ...(parsed.port ? { port: Number(parsed.port) } : {}),
    ...(parsed.user ? { user: parsed.user } : {}),
    ...(typeof parsed.password === 'string' && parsed.password !== ''
      ? { password: parsed.password }
      : {}),
    ...(parsed.database ? { dbName: parsed.database } : {}),
    driverOptions: { connection: { ...given, ...session } },
  };
}
