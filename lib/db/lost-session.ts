import type pg from 'pg';

/**
 * What follows a lost session, under synchronous replication: the session is ended so that a
 * read-back is final, and a fence proves that what it committed is on the standby too, before
 * anyone reads it (onClient in pool.ts; docs/decisions/0068).
 */

/** How long ending a lost connection's session may wait for its backend to exit. */
const END_SESSION_TIMEOUT_MS = 5_000;

/** At most this many fences before a lost backend that keeps waiting is given up on. */
const FENCE_ROUNDS = 3;

/**
 * Ends `client`'s backend and proves that whatever it committed is as durable as any
 * acknowledged commit, so that a read-back is both final and safe. True once proven; false when
 * it could not be (the caller must not read back). The pid names our backend unless it exited
 * and the server's pids wrapped around to it since, moments ago; that would end some other
 * session, which every caller survives as a lost connection.
 *
 * A backend whose COMMIT waits for the synchronous standby has committed on the primary, and
 * no one sees it yet. Ended there, PostgreSQL keeps the commit on the primary alone (it only
 * warns) and shows it at once: any request could then read it and answer from it before the
 * standby has it, and a failover in those moments would undo what that answer said. So such a
 * backend is left to its wait, and a fence (a commit of our own, which waits for the standby to
 * hold everything up to it) goes first. A backend doing anything else is ended at once: one
 * waiting on a lock would otherwise commit what it was sent once the lock is granted. Each
 * round ends what it can and fences; the lost backend may have gone on to commit again
 * meanwhile, so it is done only when a round found the backend gone and its fence held.
 *
 * Not closed: a backend caught between writing its commit record and starting its wait (its
 * wait_event is then a WAL write or none) is ended, and its commit shown early. The fence still
 * comes before this caller's read-back.
 */
export async function endSession(pool: pg.Pool, client: pg.PoolClient): Promise<boolean> {
  const { processID } = client as unknown as { processID?: number };
  for (let round = 0; round < FENCE_ROUNDS; round++) {
    // Whether the backend still runs, after ending it unless it waits for the standby;
    // undefined when that could not be asked (a failed query proves nothing).
    const running =
      processID === undefined
        ? false
        : await pool
            .query<{ ended: boolean }>(END_UNLESS_AWAITING_STANDBY, [
              processID,
              END_SESSION_TIMEOUT_MS,
            ])
            .then(
              ({ rows }) => rows.length > 0 && rows[0]?.ended !== true,
              () => undefined,
            );
    if (running === undefined) return false;
    // When the fence fails (its own wait ended early, its connection lost) nothing is proven:
    // the standby may be gone, promoted while this primary still answers (a switchover's first
    // moments). A backend still waiting is then left to its wait, which a live standby
    // completes and a failover ends unseen.
    const fenced = await pool.query(SYNCHRONOUS_FENCE).then(
      () => true,
      () => false,
    );
    if (!fenced) return false;
    if (!running) return true;
  }
  return false;
}

/**
 * One row while the backend runs, `ended` true if this ended it. One that waits for the standby
 * is left alone. The termination sits in the select list, evaluated only for the row the pid
 * picks: in WHERE, the planner may order it before the pid test, and end other sessions.
 */
const END_UNLESS_AWAITING_STANDBY = `SELECT CASE WHEN wait_event = 'SyncRep' THEN false
         ELSE pg_terminate_backend(pid, $2::bigint) END AS ended
    FROM pg_stat_activity WHERE pid = $1::int`;

/**
 * A session was lost with its commit perhaps sent, perhaps waiting for the synchronous standby,
 * and endSession could not prove that commit durable. A read now could find the commit on a
 * primary whose standby never got it, and take for done what a failover will undo. So the
 * caller does not settle the commit by reading back: the outcome stays unknown, and the request
 * fails as the database being unavailable (08007, transaction_resolution_unknown). A retry, or
 * the recovery worker, finds out once the database has settled.
 */
export class CommitUnconfirmedError extends Error {
  readonly code = '08007';

  constructor(override readonly cause: unknown) {
    super('the session was lost and its commit could not be confirmed durable');
  }
}

/**
 * The smallest commit that waits for synchronous replication. PostgreSQL makes a commit wait
 * (for its own flush and for the standby) only when its transaction wrote WAL before the commit
 * record: a transaction that merely took an id (`pg_current_xact_id()`) commits asynchronously
 * and proves nothing. A transactional logical message writes one small record and takes an id,
 * needs no table, and any role may emit it at wal_level replica; logical decoding consumers, if
 * any, see it under its prefix.
 */
const SYNCHRONOUS_FENCE = `SELECT pg_logical_emit_message(true, 'payments-gateway.fence', '')`;

/**
 * The fence a read-back commits with (durable-read-back.ts): the same message under the same
 * prefix, its content naming where it came from.
 */
export const READ_BACK_FENCE = `SELECT pg_logical_emit_message(true, 'payments-gateway.fence', 'read-back')`;
