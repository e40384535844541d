import pg from 'pg';
import { BatchingTransaction } from './batching-transaction.ts';
import { SkippedStatementError, type Statement } from './pipelined-statements.ts';
import { preparingClientClass } from './prepared-client.ts';
import { connectionFor } from './primary-client.ts';
import { CommitUnconfirmedError, endSession } from './lost-session.ts';

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
/** Idle time before the first keepalive probe of a pooled connection. */
const KEEPALIVE_IDLE_MS = 10_000;

/**
 * What every pooled connection of the process sets, the request pool's and the ORM's alike
 * (app/orm.ts): a connect that gets no answer (a stalled primary, a route that drops replies)
 * fails instead of waiting for ever, and TCP keepalives find an idle connection whose peer
 * vanished (a host powered off, a network partition) dead, instead of keeping it for ever.
 */
export const CONNECTION_BOUNDS = {
  connectionTimeoutMillis: POOL_CONNECTION_TIMEOUT_MS,
  keepAlive: true,
  keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
} as const;

/**
 * The longest one statement of request work may run (PostgreSQL's statement_timeout, set on
 * every connection of a pool at connect). Request statements take milliseconds; one that runs
 * for seconds is queued behind a lock (a long transaction, DDL that lost its own lock_timeout of
 * 2 s) or has a plan gone wrong, and it holds a pooled connection meanwhile: a few of those and
 * every request waits for a connection. Cancelled, it fails with 57014 (query_canceled), its
 * transaction rolls back, and the request ends as a masked, retryable error with its key still
 * new. Ten seconds: well above the 2 s that DDL may hold the tables' locks, and no longer than a
 * checkout waits for a connection (POOL_CONNECTION_TIMEOUT_MS), so a stuck statement gives its
 * connection back before the requests queued for one give up.
 */
export const REQUEST_STATEMENT_TIMEOUT_MS = 10_000;

/**
 * Work that legitimately runs longer than a request's statement (partition maintenance moving
 * a partition's unfinished keys, bulk re-encryption) sets its own bound for its transaction:
 * `SET LOCAL` ends with the transaction, so the pooled connection keeps the request timeout.
 * Migrations run on a connection of their own (migrations/migrate.ts), with no timeout.
 */
export const SET_MAINTENANCE_STATEMENT_TIMEOUT = `SET LOCAL statement_timeout = '5min'`;

/**
 * How much longer than its statement timeout a statement's answer may take to arrive before the
 * connection is given up on (pg's client-side query_timeout). The server cancels a slow statement
 * itself at statement_timeout; this catches what the server cannot: a connection whose peer is
 * gone (a failed-over primary behind a dead route, a network that drops everything), which
 * would otherwise hold its request for as long as TCP retransmits (many minutes).
 *
 * It is long enough for the wait no timeout covers on the server: a COMMIT waiting for a
 * synchronous standby, which a failover manager releases within seconds by taking a stalled
 * standby out of the synchronous set. Giving up here never cancels that wait (pg sends no
 * cancel; the connection is dropped): the commit's outcome is settled as after any lost
 * connection (onClient), by reading it back once it is proven durable, or not at all.
 */
const QUERY_TIMEOUT_MARGIN_MS = 20_000;

/**
 * How the pool's sessions plan a prepared statement (PostgreSQL's plan_cache_mode).
 *
 * 'generic', the default: once per connection, as prepared-client.ts intends. Left to itself
 * (`auto`), PostgreSQL plans a prepared statement anew on every execution for as long as its
 * generic plan is estimated dearer than a custom one. On the request path that estimate grows
 * with the tables, not with the work: a generic `operation = ANY($2)` is costed as ten index
 * probes, so on a database of a million payments the key lookup was planned afresh on every
 * replay, every partition of both tables included, and planning became most of a replay's
 * PostgreSQL CPU (ADR 0047). A statement whose best plan depends on its parameters must not be
 * written with optional filters (`$3 IS NULL OR …`) on a generic pool: send one text per shape.
 *
 * 'auto': maintenance, whose few statements (ranges of dates over whole partitions) are run
 * rarely and where a plan made for the values at hand is worth its planning.
 */
export type PlanCacheMode = 'generic' | 'auto';

const PLAN_CACHE_OPTIONS: Record<PlanCacheMode, string | undefined> = {
  generic: '-c plan_cache_mode=force_generic_plan',
  auto: undefined,
};

export function createPool(opts: {
  connectionString: string;
  max: number;
  applicationName: string;
  /** Defaults to REQUEST_STATEMENT_TIMEOUT_MS; 0 turns it off, and the client-side bound too. */
  statementTimeoutMs?: number;
  /** Defaults to 'generic' (see PlanCacheMode). */
  planCacheMode?: PlanCacheMode;
}): pg.Pool {
  const statementTimeoutMs = opts.statementTimeoutMs ?? REQUEST_STATEMENT_TIMEOUT_MS;
  const connection = connectionFor(opts.connectionString, {
    applicationName: opts.applicationName,
    // Parameterised statements are prepared once per connection (see prepared-client.ts).
    base: preparingClientClass(),
  });
  const pool = new pg.Pool({
    ...connection.config,
    max: opts.max,
    // Sent in the connection's startup packet: no extra round trip, and a connection opened
    // anew after a backend was killed has it too. `options` given in the URL win over these.
    statement_timeout: statementTimeoutMs,
    options: PLAN_CACHE_OPTIONS[opts.planCacheMode ?? 'generic'],
    ...(statementTimeoutMs > 0
      ? { query_timeout: statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS }
      : {}),
    ...CONNECTION_BOUNDS,
    idleTimeoutMillis: POOL_IDLE_TIMEOUT_MS,
    application_name: opts.applicationName,
    Client: connection.Client,
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
   * Statements that must run first, in the same round trip as whatever else the transaction
   * sends before it first waits: right after BEGIN (withTransaction), or before the statements
   * (withOneRoundTrip). See lockingScope.
   */
  first?: Statement[];
}

/**
 * Runs `work` in one READ COMMITTED transaction (the level at which a losing
 * `INSERT … ON CONFLICT DO NOTHING` waits for the winner and returns no row, instead of
 * failing with 40001 as it would under REPEATABLE READ). Rolls back on any error. A client
 * whose connection broke mid-transaction is destroyed, not returned to the pool.
 */
export function withTransaction<T>(
  pool: pg.Pool,
  work: (tx: TxClient) => Promise<T>,
  opts: TransactionOptions = {},
): Promise<T> {
  let committing = false;
  return onClient(
    pool,
    async (tx) => {
      // BEGIN, the first statements and work's first statements leave in one round trip. If
      // BEGIN or a first statement fails, work sees its statements skipped: report the cause.
      const begun = Promise.all(
        [{ text: 'BEGIN', values: [] }, ...(opts.first ?? [])].map((s) =>
          tx.query(s.text, s.values),
        ),
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
      committing = true;
      assertCommitted(await tx.query('COMMIT'));
      return result;
    },
    { mayHaveCommitted: () => committing },
  );
}

export interface OneRoundTripOptions extends TransactionOptions {
  /** Runs with the connection checked out, before anything is sent (a fault point). */
  beforeSend?: () => Promise<void>;
  /**
   * Runs once the round trip has been written, its commit included, before its answers are read
   * (a fault point). What it throws is reported after the round trip has ended, as a commit in
   * doubt (InterruptedAfterSendError): the caller reads back whether it committed.
   */
  afterSend?: () => Promise<void>;
}

/**
 * One READ COMMITTED transaction whose statements are all known before it starts, in one round
 * trip: `first` and `statements` leave together, with no BEGIN and no COMMIT, and end with one
 * Sync. PostgreSQL runs the statements before a Sync as one implicit transaction: they share one
 * transaction (one xid, one now(), transaction-scoped locks held to the end), and the Sync
 * commits it when every statement succeeded, or rolls it back when one failed. The answers to
 * `statements` come back in their order. withTransaction needs two round trips for the same
 * statements, because its work may read an answer before it lets the commit go.
 *
 * Here nothing can be decided between an answer and the commit: it has happened by the time any
 * answer arrives. So the statements are data, not code that could wait, and every condition
 * the transaction depends on is checked by the statement that establishes it (fail_unless,
 * failed-checks.ts). Failure modes:
 * - A statement fails (a failed check, a constraint, a statement timeout): PostgreSQL skips the
 *   rest and rolls the transaction back at the Sync. The call rejects with that statement's
 *   error, and nothing more is sent: the session is already idle, so no ROLLBACK is needed.
 * - The commit itself fails (a deferred constraint, a serialisation failure): PostgreSQL answers
 *   every statement and then the error; the last statement's promise carries it.
 * - The connection is lost once the statements have left: whether the commit ran is unknown,
 *   and a backend waiting on a lock would still run it once the lock is granted (it has read
 *   the whole round trip and does not look at its socket meanwhile). So the call ends that
 *   session first (onClient), then rejects with the connection's error; the caller settles the
 *   commit by reading back a row that only the commit could have written. When the commit
 *   could not be proven durable, it rejects with CommitUnconfirmedError, and nothing is read.
 */
export function withOneRoundTrip(
  pool: pg.Pool,
  statements: Statement[],
  opts: OneRoundTripOptions = {},
): Promise<pg.QueryResult[]> {
  // Whether the session may still be inside the transaction when the call fails: not when
  // nothing was sent, nor once PostgreSQL has reported how the round trip ended.
  const sessionIdleAfter = (error: unknown) =>
    !sending || error instanceof InterruptedAfterSendError || reportedByServer(error);
  let sending = false;
  return onClient(
    pool,
    async (tx) => {
      await opts.beforeSend?.();
      const first = opts.first ?? [];
      sending = true;
      const sent = [...first, ...statements].map((s) => tx.query(s.text, s.values));
      tx.flush();
      const interrupted = opts.afterSend?.().then(
        () => null,
        (error: unknown) => ({ error }),
      );
      const answers = await Promise.allSettled(sent);
      const afterSend = await interrupted; // the fault point's action has ended, whatever came back
      const failures = answers.flatMap((a): unknown[] =>
        a.status === 'rejected' ? [a.reason] : [],
      );
      // The statement that failed, not the ones PostgreSQL skipped after it.
      const failure = failures.find((f) => !(f instanceof SkippedStatementError)) ?? failures[0];
      if (failures.length > 0) throw failure;
      if (afterSend) throw new InterruptedAfterSendError(afterSend.error);
      const results = answers.map((a) => (a.status === 'fulfilled' ? a.value : undefined));
      return results.slice(first.length) as pg.QueryResult[];
    },
    { needsRollback: (error) => !sessionIdleAfter(error), mayHaveCommitted: () => sending },
  );
}

/**
 * An error PostgreSQL sent as an answer (ErrorResponse, severity ERROR): the session lives on,
 * and at the end of the round trip it is idle again, its transaction aborted. A FATAL one ends
 * the session, and an error of the connection is no answer at all.
 */
export function reportedByServer(error: unknown): boolean {
  return error instanceof pg.DatabaseError && error.severity === 'ERROR';
}

/**
 * A round trip's afterSend failed while the round trip was on its way. The transaction
 * committed (a failed one reports its own error), but the caller was interrupted before it could
 * know: like a lost answer, it is settled by reading back.
 */
export class InterruptedAfterSendError extends Error {
  constructor(override readonly cause: unknown) {
    super('interrupted after the round trip with its commit was sent');
  }
}

/**
 * Checks out a client, runs `run` on it as a transaction's client, and rolls back if `run`
 * fails. A checked-out client has no listener of the pool's: if its backend is terminated
 * between statements (idle in transaction), the 'error' event would be unhandled and take the
 * whole process down. It is recorded instead; the next statement fails and the client is
 * destroyed on release, not returned to the pool.
 *
 * A client that cannot even send ROLLBACK has lost its connection, but not necessarily its
 * session: a backend waiting on a lock has not noticed, and runs what it was sent once the
 * lock is granted (the whole round trip, commit included, for withOneRoundTrip). That session
 * is ended from another connection before the error is passed on, so that what the caller
 * reads back next is final, and a fence proves it durable (endSession). When that cannot be
 * proven and a commit may have been sent, the error is CommitUnconfirmedError instead, and the
 * caller must not read back.
 */
async function onClient<T>(
  pool: pg.Pool,
  run: (tx: BatchingTransaction) => Promise<T>,
  opts: {
    needsRollback?: (error: unknown) => boolean;
    /** Whether a commit may have been sent when `run` failed; only then is its outcome unknown. */
    mayHaveCommitted?: () => boolean;
  } = {},
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken ??= error;
  };
  client.on('error', onError);
  const tx = new BatchingTransaction(client);
  let released = false;
  const release = () => {
    released = true;
    client.off('error', onError);
    client.release(broken);
  };
  try {
    const result = await run(tx);
    tx.end('committed');
    return result;
  } catch (error) {
    tx.end(error);
    if (opts.needsRollback?.(error) === false) throw error;
    let rolledBack = true;
    try {
      await client.query('ROLLBACK');
    } catch (rollbackError) {
      broken ??= rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      rolledBack = false;
    }
    if (rolledBack) throw error;
    // The session is lost. Released first: ending it takes a connection, and the pool may have
    // no other.
    release();
    const proven = await endSession(pool, client);
    // A transaction whose COMMIT never left cannot have committed: its own error stands.
    if (proven || opts.mayHaveCommitted?.() === false) throw error;
    throw new CommitUnconfirmedError(error);
  } finally {
    if (!released) release();
  }
}

/**
 * COMMIT of a transaction a failed statement aborted (one the work issued and did not await)
 * is answered ROLLBACK, not an error: that must not pass for a commit.
 */
function assertCommitted(answer: pg.QueryResult | undefined): void {
  if (answer?.command !== 'COMMIT') {
    throw new Error(`COMMIT was answered ${answer?.command ?? 'nothing'}: rolled back`);
  }
}
