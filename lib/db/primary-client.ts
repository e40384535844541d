import pg from 'pg';
import { parseDatabaseUrl, type Endpoint } from './database-url.ts';
import {
  isPrimaryLost,
  isWritable,
  PrimaryFinder,
  WRITABLE_CHECK,
  type WritableRow,
} from './primary-finder.ts';

/**
 * A pg client that connects to whichever host the finder says is the primary, checks on
 * connecting that it really takes writes, and tells the finder when it learns otherwise.
 *
 * pg's Client reads its `host` and `port` (public fields) when it connects, so the host is
 * chosen then, not when the pool constructs the client. The check costs one round trip per new
 * connection, not per query: connections live for many requests. Anything that shows the
 * primary has moved (isPrimaryLost: 57P01 from a stopped server, 25006 from a demoted one, a
 * dead socket) makes the finder ask again for the next connection; this one is dropped by the
 * pool, as any broken connection is.
 */
export function primaryClientClass(
  finder: PrimaryFinder,
  base: typeof pg.Client = pg.Client,
): typeof pg.Client {
  class PrimaryClient extends base {
    private endpoint: Endpoint | undefined;

    override connect(...args: unknown[]): never {
      const [callback] = args as [((error?: Error) => void) | undefined];
      const connected = this.connectToPrimary();
      if (typeof callback !== 'function') return connected as never;
      connected.then(
        () => callback(),
        (error: Error) => callback(error),
      );
      return undefined as never;
    }

    override query(...args: unknown[]): never {
      const result = (base.prototype.query as (...a: unknown[]) => unknown).apply(this, args);
      if (isThenable(result)) result.then(undefined, (error: unknown) => this.noteError(error));
      return result as never;
    }

    private async connectToPrimary(): Promise<void> {
      const endpoint = await finder.locate();
      this.endpoint = endpoint;
      this.host = endpoint.host;
      this.port = endpoint.port;
      this.on('error', (error) => this.noteError(error));
      try {
        await new Promise<void>((resolve, reject) => {
          base.prototype.connect.call(this, (error?: Error) => (error ? reject(error) : resolve()));
        });
      } catch (error) {
        finder.forget(endpoint);
        throw error;
      }
      const { rows } = await (
        base.prototype.query as (text: string) => Promise<pg.QueryResult<WritableRow>>
      ).call(this, WRITABLE_CHECK);
      if (!isWritable(rows[0])) {
        finder.forget(endpoint);
        await this.end().catch(() => undefined);
        throw new NotPrimaryError(endpoint);
      }
    }

    private noteError(error: unknown): void {
      if (this.endpoint !== undefined && isPrimaryLost(error)) finder.forget(this.endpoint);
    }
  }
  return PrimaryClient;
}

function isThenable(value: unknown): value is Promise<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** The host the finder named turned out to be a standby, or a primary being demoted. */
export class NotPrimaryError extends Error {
  /** SQLSTATE 25006 (read_only_sql_transaction): what a write there would have met. */
  readonly code = '25006';

  constructor(endpoint: Endpoint) {
    super(
      `${endpoint.host}:${endpoint.port} no longer takes writes; looking for the primary again`,
    );
  }
}

/**
 * What a pool or a lone client is built with for DATABASE_URL: pg's own client and the URL as
 * it always was for one host without target_session_attrs; otherwise a client that finds the
 * primary among the URL's hosts. Each call has a finder of its own (no process-wide state):
 * after a failover each pool asks once, which costs a probe of each host per pool.
 */
export function connectionFor(
  connectionString: string,
  opts: { applicationName?: string; base?: typeof pg.Client } = {},
): { config: pg.ClientConfig; Client: typeof pg.Client } {
  const url = parseDatabaseUrl(connectionString);
  const base = opts.base ?? pg.Client;
  if (!url.requirePrimary) return { config: { connectionString }, Client: base };
  const finder = new PrimaryFinder(url, { applicationName: opts.applicationName });
  return { config: url.configFor(url.endpoints[0]!), Client: primaryClientClass(finder, base) };
}
