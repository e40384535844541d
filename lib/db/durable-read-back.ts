import type pg from 'pg';
import { CommitUnconfirmedError, READ_BACK_FENCE } from './lost-session.ts';
import type { Statement } from './pipelined-statements.ts';
import { reportedByServer, withOneRoundTrip } from './pool.ts';

/**
 * Reads back what a lost session may have committed, proving it durable on the server it was
 * read from (docs/decisions/0070): `read`, then a fence, in one round trip on one connection,
 * which commits both at its end. That commit waits for the synchronous standby to hold the WAL
 * up to it, and so every commit the read saw, which came before it. The rows are returned only
 * once it has.
 *
 * endSession's fence (lost-session.ts) proves the same of the server its own connection reached.
 * In a switchover's first moments that may be the new primary while the read reaches the old
 * one, where the lost commit may sit alone, visible, and be undone by the failover. A read and
 * its fence in one round trip cannot be split that way.
 *
 * Any failure is CommitUnconfirmedError: the fence's wait outlived the pool's query timeout (a
 * standby that does not answer), the server is a standby now, the connection dropped. Nothing
 * is settled, and the caller fails retryably, as when endSession could not prove the commit.
 */
export async function readBackDurably<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  read: Statement,
): Promise<R[]> {
  try {
    const [result] = await withOneRoundTrip(pool, [read, { text: READ_BACK_FENCE, values: [] }]);
    return (result?.rows ?? []) as R[];
  } catch (error) {
    throw error instanceof CommitUnconfirmedError ? error : new CommitUnconfirmedError(error);
  }
}

/**
 * Whether a failed transaction may have committed, and is worth reading back. Not when
 * PostgreSQL answered one of its statements (or its COMMIT) with an error of severity ERROR: that
 * aborted the transaction, so nothing of it committed. A lost connection, an answer that never
 * came, a FATAL: in doubt.
 */
export function commitInDoubt(error: unknown): boolean {
  return !reportedByServer(error);
}
