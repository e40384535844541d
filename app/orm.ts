import { MikroORM } from '@mikro-orm/postgresql';
import { ormConnection } from '../migrations/orm-connection.ts';
import { ENTITIES } from './entities.ts';
import { parseDatabaseUrl } from '../lib/db/database-url.ts';
import { CONNECTION_BOUNDS, REQUEST_STATEMENT_TIMEOUT_MS } from '../lib/db/pool.ts';
import {
  isPrimaryLost,
  isWritable,
  PrimaryFinder,
  WRITABLE_CHECK,
  type WritableRow,
} from '../lib/db/primary-finder.ts';
import type pg from 'pg';

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
    // A connect that gets no answer fails, and a dead idle connection is found, as the request
    // pool's are. No query_timeout: knex would put a connection whose statement it gave up on
    // back in its pool, with the statement still running there.
    ...CONNECTION_BOUNDS,
  };
  const primary = primaryConnection(options.databaseUrl, session);
  return MikroORM.initSync({
    // The URL parsed as pg parses it: MikroORM's own parser refuses a unix socket's ?host=/dir.
    ...ormConnection(options.databaseUrl, undefined, session),
    entities: ENTITIES,
    ...(primary === undefined
      ? { pool: { min: 0, max: options.poolMax } }
      : {
          pool: { min: 0, max: options.poolMax, afterCreate: primary.afterCreate },
          driverOptions: { connection: primary.connection },
        }),
    debug: false,
    allowGlobalContext: false,
  });
}

/**
 * For a DATABASE_URL with several hosts, the ORM's connections follow the primary through
 * knex's own hooks:
 * - `connection`, knex's connection provider, names the primary the finder knows (finding it
 *   first if need be). Its expirationChecker says "expired" once the finder forgets that host:
 *   knex then asks again, and drops the pooled connections made to it at their next checkout.
 * - `afterCreate` checks that a new connection really reached a writable server, and makes
 *   the connection's errors that mean the primary moved (57P01, 25006, a dead socket) tell
 *   the finder.
 */
function primaryConnection(
  databaseUrl: string,
  session: Record<string, unknown>,
):
  | {
      connection: () => Promise<Record<string, unknown>>;
      afterCreate: (
        connection: pg.Client,
        done: (error: Error | null, c: pg.Client) => void,
      ) => void;
    }
  | undefined {
  const url = parseDatabaseUrl(databaseUrl);
  if (!url.requirePrimary) return undefined;
  const finder = new PrimaryFinder(url, { applicationName: String(session['application_name']) });
  return {
    async connection() {
      const endpoint = await finder.locate();
      return {
        ...url.configFor(endpoint),
        ...session,
        expirationChecker: () => !finder.isCurrent(endpoint),
      };
    },
    afterCreate(connection, done) {
      const endpoint = { host: connection.host, port: Number(connection.port) };
      const forget = () => finder.forgetHost(endpoint);
      connection.on('error', (error) => {
        if (isPrimaryLost(error)) forget();
      });
      connection.query<WritableRow>(WRITABLE_CHECK).then(
        ({ rows }) => {
          if (isWritable(rows[0])) return done(null, connection);
          forget();
          done(new Error(`${endpoint.host}:${endpoint.port} no longer takes writes`), connection);
        },
        (error: Error) => {
          forget();
          done(error, connection);
        },
      );
    },
  };
}
