import pg from 'pg';

export interface Statement {
  text: string;
  values: unknown[];
}

/** The parts of pg's Connection a batch drives: the extended-protocol messages. */
interface Connection {
  parsedStatements: Record<string, string>;
  stream: { cork?: () => void; uncork?: () => void };
  parse(msg: { text: string; name?: string }): void;
  bind(msg: { statement?: string; values: unknown[] }): void;
  describe(msg: { type: 'P'; name: string }): void;
  execute(msg: { portal: string }): void;
  sync(): void;
  on(event: 'parseComplete', listener: () => void): void;
  off(event: 'parseComplete', listener: () => void): void;
}

/** pg's own result builder and value serialiser (exported at run time, not in @types/pg). */
interface ResultBuilder extends pg.QueryResult {
  addFields(fields: unknown[]): void;
  parseRow(fields: unknown[]): unknown;
  addRow(row: unknown): void;
  addCommandComplete(msg: unknown): void;
}
const pgInternals = pg as unknown as {
  Result: new () => ResultBuilder;
  utils: { prepareValue: (value: unknown) => unknown };
};

interface PendingResult {
  result: ResultBuilder;
  resolve: (result: pg.QueryResult) => void;
  reject: (error: unknown) => void;
}

/**
 * Statements after the one that failed in the same round trip: PostgreSQL skipped them (it
 * discards everything up to the Sync once a statement fails), so they did not run at all.
 */
export class SkippedStatementError extends Error {
  constructor(override readonly cause: unknown) {
    super('not run: an earlier statement of the same round trip failed');
  }
}

/**
 * Several parameterised statements in one round trip: Parse (on first use by this connection),
 * Bind, Describe and Execute for each, then a single Sync — PostgreSQL's extended-protocol
 * pipeline. node-postgres alone sends one statement per round trip, and on the hot path a
 * round trip costs the gateway more than most statements cost PostgreSQL (see
 * docs/decisions/0006-pipelined-statements-on-pg-internals.md).
 *
 * What one Sync means, and why callers can rely on it:
 * - The statements run in order, each with its own snapshot (READ COMMITTED) that sees the
 *   writes of those before it. Inside BEGIN … COMMIT the Sync does not commit; outside, the
 *   statements before it are one implicit transaction, which the Sync commits.
 * - When one fails, PostgreSQL skips the rest up to the Sync and the transaction is aborted:
 *   the failing statement's promise rejects with PostgreSQL's error, each later one with
 *   SkippedStatementError. That is where sending them one by one and stopping at the first
 *   error would have left the transaction too.
 * - A connection lost mid-batch fails every statement still unanswered (pg calls handleError).
 *
 * A pg "submittable": the client routes each protocol message of the batch here, in order.
 */
export class PipelinedStatements {
  private readonly pending: PendingResult[] = [];
  /** The statement whose answer is being read. */
  private current = 0;
  private settled = false;
  private connection: Connection | undefined;
  /**
   * Every Parse sent, in order, named or not: each ParseComplete confirms the next one. Only a
   * confirmed named statement is recorded as prepared on the connection; one whose Parse was
   * skipped after an earlier failure is not, and is parsed again on its next use.
   */
  private readonly parsing: Array<{ name: string | undefined; text: string }> = [];
  private readonly onParseComplete = () => {
    const parsed = this.parsing.shift();
    if (parsed?.name !== undefined && this.connection !== undefined) {
      this.connection.parsedStatements[parsed.name] = parsed.text;
    }
  };

  /** A promise per statement, in order. */
  readonly results: Array<Promise<pg.QueryResult>>;

  /**
   * Set by pg's Client.query, and called here once the round trip has settled, as pg's own
   * Query calls it. With a query_timeout (the request pool has one, pool.ts), pg wraps it to
   * clear the timer that would fail the round trip as unanswered. Never called, that timer
   * outlived every round trip by the whole timeout, and held the round trip with every row of
   * its answer until then: memory and garbage-collection work that grew with the request rate.
   */
  callback: ((error: unknown) => void) | undefined;

  constructor(
    /** The statements, in the order they are sent. */
    readonly statements: readonly Statement[],
    /** The connection-wide name of a parameterised statement (see prepared-client.ts). */
    private readonly nameOf: (text: string) => string,
  ) {
    this.results = statements.map(
      () =>
        new Promise<pg.QueryResult>((resolve, reject) => {
          this.pending.push({ result: new pgInternals.Result(), resolve, reject });
        }),
    );
  }

  submit(connection: Connection): Error | null {
    // Every value is serialised before a byte is written: a value pg cannot send (a BigInt
    // inside a JSON object, say) fails the whole batch here, with nothing half-sent that
    // PostgreSQL would wait on. pg then fails it through handleError and moves on.
    let bound: unknown[][];
    try {
      bound = this.statements.map(({ values }) => values.map(pgInternals.utils.prepareValue));
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
    this.connection = connection;
    connection.on('parseComplete', this.onParseComplete);
    const parsedHere = new Set<string>();
    connection.stream.cork?.();
    try {
      this.statements.forEach(({ text, values }, i) => {
        // Unparameterised text (BEGIN) goes as the unnamed statement, parsed each time.
        const name = values.length > 0 ? this.nameOf(text) : undefined;
        if (name === undefined) {
          connection.parse({ text });
          this.parsing.push({ name, text });
        } else if (connection.parsedStatements[name] === undefined && !parsedHere.has(name)) {
          connection.parse({ text, name });
          this.parsing.push({ name, text });
          parsedHere.add(name);
        }
        connection.bind({ statement: name, values: bound[i] ?? [] });
        connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '' });
      });
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(msg: { fields: unknown[] }): void {
    this.pending[this.current]?.result.addFields(msg.fields);
  }

  handleDataRow(msg: { fields: unknown[] }): void {
    const result = this.pending[this.current]?.result;
    result?.addRow(result.parseRow(msg.fields));
  }

  handleCommandComplete(msg: unknown): void {
    this.pending[this.current++]?.result.addCommandComplete(msg);
  }

  handleEmptyQuery(): void {
    this.current++;
  }

  /**
   * Settled together when the round trip ends, so a failure after the last statement's answer
   * (at an implicit commit) still reaches a caller: the last statement carries it.
   */
  handleError(error: unknown): void {
    const failing = Math.min(this.current, this.pending.length - 1);
    this.settle((i) =>
      i < failing ? 'answered' : i === failing ? error : new SkippedStatementError(error),
    );
  }

  handleReadyForQuery(): void {
    if (this.settled) return;
    const answered = this.current;
    if (answered >= this.pending.length) {
      this.settle(() => 'answered');
      return;
    }
    // Every statement is answered before the Sync's ReadyForQuery; this is a protocol surprise.
    // Built only then: an Error captures a stack trace, async frames included, which is dear
    // on every round trip (docs/decisions/0006-pipelined-statements-on-pg-internals.md).
    const unanswered = new Error('PostgreSQL ended the round trip without answering');
    this.settle((i) => (i < answered ? 'answered' : unanswered));
  }

  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}
  handleCopyData(): void {}

  /** Per statement: 'answered' (it ran; resolve) or the reason it failed or never ran. */
  private settle(outcome: (i: number) => unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.connection?.off('parseComplete', this.onParseComplete);
    let failure: unknown = null;
    this.pending.forEach((p, i) => {
      const result = outcome(i);
      if (result === 'answered') p.resolve(p.result);
      else {
        failure ??= result;
        p.reject(result);
      }
    });
    this.callback?.(failure);
  }
}
