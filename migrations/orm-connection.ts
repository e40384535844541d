import connectionString from 'pg-connection-string';

const { parse } = connectionString;

/**
 * MikroORM's connection options for a libpq-style URL. MikroORM parses `clientUrl` with the WHATWG
 * URL parser, which refuses forms libpq and `pg` accept (a unix socket as
 * `postgresql://user@/db?host=/var/run/postgresql`), so the URL is parsed the way `pg` parses it
 * and handed over as discrete fields.
 */
export function ormConnection(databaseUrl: string): {
  host?: string;
  port?: number;
  user?: string;
  password?: string;
  dbName?: string;
} {
  const parsed = parse(databaseUrl);
  return {
    ...(parsed.host ? { host: parsed.host } : {}),
    ...(parsed.port ? { port: Number(parsed.port) } : {}),
    ...(parsed.user ? { user: parsed.user } : {}),
    ...(parsed.password ? { password: parsed.password } : {}),
    ...(parsed.database ? { dbName: parsed.database } : {}),
  };
}
