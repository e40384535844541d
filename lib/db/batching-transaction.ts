import type pg from 'pg';
import {
  PipelinedStatements,
  SkippedStatementError,
  type Statement,
} from './pipelined-statements.ts';

/** A client that can name its prepared statements (prepared-client.ts) can batch them. */
interface NamingClient {
  statementName(text: string): string;
}

function canName(client: object): client is NamingClient {
  return typeof (client as Partial<NamingClient>).statementName === 'function';
}

interface Queued {
  statement: Statement;
  resolve: (result: pg.QueryResult) => void;
  reject: (error: unknown) => void;
}

/**
 * A transaction's client that sends, in one round trip, every parameterised statement issued
 * before the code issuing them waits for anything (the batch is flushed on process.nextTick,
 * once the current promise continuations have run). Code that awaits each statement before
 * the next gets one round trip per statement, as before; code whose statements do not depend
 * on each other's answers issues them together and pays one. Order is kept: a batch is sent
 * after the one before it has been answered, and an unparameterised statement (DDL, SET)
 * first flushes what is queued and then goes alone, by the simple protocol.
 *
 * Issuing statements together changes what runs when a statement fails: PostgreSQL skips the
 * rest of the batch (SkippedStatementError) and the transaction is aborted, which is where a
 * caller that awaited each one would have stopped anyway. What it does not skip is a statement
 * the caller would have decided not to send after reading an earlier answer: batch only
 * statements that are safe to run speculatively, because the transaction then rolls back.
 */
export class BatchingTransaction {
  private queue: Queued[] = [];
  private flushScheduled = false;
  /**
   * Why the transaction ended. The error is built only for a statement that comes after: a
   * stack trace at every end is dear (docs/decisions/0006-pipelined-statements-on-pg-internals.md).
   */
  private ended: { cause: unknown } | null = null;

  constructor(private readonly client: pg.PoolClient) {}

  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>> {
    // A statement issued after COMMIT or ROLLBACK (a sibling promise still running) would
    // otherwise go out on a client back in the pool: outside the transaction, or inside
    // another request's.
    if (this.ended !== null) return Promise.reject(new TransactionEndedError(this.ended.cause));
    if (values === undefined || !canName(this.client)) {
      this.flush();
      return this.client.query<R>(text, values);
    }
    return new Promise<pg.QueryResult<R>>((resolve, reject) => {
      this.queue.push({
        statement: { text, values },
        resolve: resolve as (result: pg.QueryResult) => void,
        reject,
      });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        process.nextTick(() => this.flush());
      }
    });
  }

  /**
   * Ends the transaction's use of the client: what is queued and not yet sent is dropped
   * (SkippedStatementError), and every later statement is refused.
   */
  end(cause: unknown): void {
    this.ended ??= { cause };
    const dropped = this.queue;
    this.queue = [];
    for (const queued of dropped) queued.reject(new SkippedStatementError(cause));
  }

  /** Sends what is queued now (normally left to the scheduled flush). */
  flush(): void {
    this.flushScheduled = false;
    const batch = this.queue;
    if (batch.length === 0) return;
    this.queue = [];
    const [only] = batch;
    if (batch.length === 1 && only !== undefined) {
      this.client.query(only.statement.text, only.statement.values).then(only.resolve, only.reject);
      return;
    }
    const client = this.client as pg.PoolClient & NamingClient;
    const pipelined = new PipelinedStatements(
      batch.map((queued) => queued.statement),
      (text) => client.statementName(text),
    );
    pipelined.results.forEach((result, i) => {
      const queued = batch[i];
      if (queued !== undefined) result.then(queued.resolve, queued.reject);
    });
    client.query(pipelined as unknown as pg.Submittable);
  }
}

/** A statement issued on a transaction that has committed or rolled back. */
export class TransactionEndedError extends Error {
  constructor(override readonly cause: unknown) {
    super('statement issued after its transaction ended');
  }
}

/**
 * Starts `work`, which issues statements alongside others already issued. A synchronous throw
 * becomes a rejection, so the statements issued before it are still awaited, never orphaned
 * (an orphaned rejection takes the process down).
 */
export function startWork<T>(work: () => Promise<T>): Promise<T> {
  try {
    return work();
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}
