import { MikroORM } from '@mikro-orm/postgresql';
import { ormConnection } from '../migrations/orm-connection.ts';
import { ENTITIES } from './entities.ts';
import { parseDatabaseUrl } from './kernel/db/database-url.ts';
import { REQUEST_STATEMENT_TIMEOUT_MS } from './kernel/db/pool.ts';
import { PrimaryFinder } from './kernel/db/primary-finder.ts';

export type Orm = MikroORM;

export interface OrmOptions {
  databaseUrl: string;
  /** Connections of the ORM's own pool, beside the request path's pg pool. */
  poolMax: number;
  applicationName: string;
  /** statement_timeout of each connection: the request pool's (db/pool.ts) unless set. */
  statementTimeoutMs?: number;
}

/**
 * The process's one MikroORM instance, for the read and management side (ADR 0020). Created by
 * the services' composition and closed with it; each request works on `orm.em.fork()`, since
 * the global EntityManager's identity map would otherwise be shared by every request (MikroORM
 * refuses its use: allowGlobalContext stays false). It connects on first use, so composing the
 * services stays synchronous and a database that is down fails a query, not the start.
 */
export function createOrm(options: OrmOptions): Orm {
  const session = {
    application_name: options.applicationName,
    // The same bound as the request pool's, for the same reason: a read stuck behind a
    // lock must not hold one of this pool's few connections indefinitely.
    statement_timeout: options.statementTimeoutMs ?? REQUEST_STATEMENT_TIMEOUT_MS,
  };
  return MikroORM.initSync({
    // The URL parsed as pg parses it: MikroORM's own parser refuses a unix socket's ?host=/dir.
    ...ormConnection(options.databaseUrl),
    entities: ENTITIES,
    pool: { min: 0, max: options.poolMax },
    driverOptions: { connection: primaryConnection(options.databaseUrl, session) ?? session },
    debug: false,
    allowGlobalContext: false,
  });
}

/**
 * For a DATABASE_URL with several hosts: knex's connection provider (knex calls it for each new
 * connection, since its expirationChecker always says expired), which asks which host is the
 * primary. It asks afresh each time: the ORM's few connections are opened rarely, and a cached
 * answer would keep sending them to a host that has since been demoted.
 */
function primaryConnection(
  databaseUrl: string,
  session: Record<string, unknown>,
): (() => Promise<Record<string, unknown>>) | undefined {
  const url = parseDatabaseUrl(databaseUrl);
  if (!url.requirePrimary) return undefined;
  return async () => {
    const finder = new PrimaryFinder(url, { applicationName: String(session['application_name']) });
    const endpoint = await finder.locate();
    return { ...url.configFor(endpoint), ...session, expirationChecker: () => true };
  };
}
