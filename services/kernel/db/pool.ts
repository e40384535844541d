import pg from 'pg';
import { BatchingTransaction } from './batching-transaction.ts';
import type { Statement } from './pipelined-statements.ts';
import { preparingClientClass } from './prepared-client.ts';

/** Anything that runs a query: the pool itself (autocommit) or a client inside a transaction. */
export interface Queryable {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's own default row type
  query<R extends pg.QueryResultRow = any>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>>;
}
/** A transaction's client: statements by text and values (batching-transaction.ts). */
export type TxClient = Queryable;

// Without a parser pg hands bigint columns back as strings, which is what we want for money:
// amounts are parsed with BigInt where they are used, never through a float.

/** How long a checkout may wait for a free connection before the request fails as transient. */
const POOL_CONNECTION_TIMEOUT_MS = 10_000;
/** Idle connections are closed after this, so a restarted PostgreSQL is not met with dead ones. */
const POOL_IDLE_TIMEOUT_MS = 30_000;

export function createPool(opts: {
  connectionString: string;
  max: number;
  applicationName: string;
}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: opts.connectionString,
    max: opts.max,
    connectionTimeoutMillis: POOL_CONNECTION_TIMEOUT_MS,
    idleTimeoutMillis: POOL_IDLE_TIMEOUT_MS,
    application_name: opts.applicationName,
    // Parameterised statements are prepared once per connection (see prepared-client.ts).
    Client: preparingClientClass(),
  });
  // An idle connection whose backend was terminated emits 'error' on the pool. Unhandled, it
  // would crash the process; handled, pg drops that client and the next checkout opens anew.
  pool.on('error', () => undefined);
  // Every client keeps a listener of its own for its whole life. The pool listens only while a
  // client is idle and stops at checkout; withTransaction starts listening only when
  // `await pool.connect()` resumes, a microtask later. A FATAL "terminating connection" parsed
  // in between (say in the same read as a fresh connection's ReadyForQuery) was an unhandled
  // 'error' event that killed the process (found by the chaos suite, seed 21). With this
  // listener nothing is lost: pg marks the client unqueryable before it emits, so its next
  // query fails, the transaction is abandoned, and release() drops it from the pool.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

export interface TransactionOptions {
  /**
   * Statements that must run first, right after BEGIN and in the same round trip as BEGIN and
   * whatever `work` issues before it first waits (see lockingScope).
   */
  first?: Statement[];
}

/**
 * Runs `work` in one READ COMMITTED transaction (the level at which a losing
 * `INSERT … ON CONFLICT DO NOTHING` waits for the winner and returns no row, instead of
 * failing with 40001 as it would under REPEATABLE READ). Rolls back on any error. A client
 * whose connection broke mid-transaction is destroyed, not returned to the pool.
 */
export async function withTransaction<T>(
  pool: pg.Pool,
  work: (tx: TxClient) => Promise<T>,
  opts: TransactionOptions = {},
): Promise<T> {
  const client = await pool.connect();
  // A checked-out client has no listener of the pool's: if its backend is terminated between
  // statements (idle in transaction), the 'error' event would be unhandled and take the whole
  // process down. Record it instead; the next statement fails and the client is destroyed.
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken ??= error;
  };
  client.on('error', onError);
  const tx = new BatchingTransaction(client);
  try {
    // BEGIN, the first statements and work's first statements leave in one round trip. If
    // BEGIN or a first statement fails, work sees its statements skipped: report the cause.
    const begun = Promise.all(
      [{ text: 'BEGIN', values: [] }, ...(opts.first ?? [])].map((s) => tx.query(s.text, s.values)),
    );
    begun.catch(() => undefined);
    let result: T;
    try {
      result = await work(tx);
    } catch (error) {
      await begun;
      throw error;
    }
    await begun;
    // COMMIT of a transaction a failed statement aborted (one the work issued and did not
    // await) is answered ROLLBACK, not an error: that must not pass for a commit.
    const committed = await tx.query('COMMIT');
    if (committed.command !== 'COMMIT') {
      throw new Error(`COMMIT was answered ${committed.command ?? 'nothing'}: rolled back`);
    }
    tx.end('committed');
    return result;
  } catch (error) {
    tx.end(error);
    try {
      await client.query('ROLLBACK');
    } catch (rollbackError) {
      broken ??= rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    }
    throw error;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

/** SQLSTATE of a pg error, or undefined. Branch on this, never on message text. */
export function sqlState(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const { code } = error;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}
