import type { JsonValue } from '../canonical-json.ts';
import type pg from 'pg';
import { startWork } from '../db/batching-transaction.ts';
import { CHECKS, isFailedCheck } from '../db/failed-checks.ts';
import type { Statement } from '../db/pipelined-statements.ts';
import { withOneRoundTrip, withTransaction, type TxClient } from '../db/pool.ts';
import { commitInDoubt, readBackDurably } from '../db/durable-read-back.ts';
import { CommitUnconfirmedError } from '../db/lost-session.ts';
import { LeaseLostError } from '../errors.ts';
import { FaultInjectedError } from '../faults.ts';
import { logStep } from '../logging/request-trace.ts';
import { ADVANCE_KEY, FINISH_KEY, LOCK_KEY, RELEASE_KEY, SELECT_KEY } from './idempotency.sql.ts';
import { LeaseHeartbeat } from './lease-heartbeat.ts';
import { answerToStore } from './stored-answer.ts';
import type { EngineDeps, OwnedRow, Scope, StoredAnswer } from './types.ts';

export const FINISHED = 'finished';

/**
 * A phase's work: code that runs in the phase's transaction (it may read answers, and the
 * phase takes a round trip more for its COMMIT), or statements sent with the fence as one
 * transaction in one round trip. Statements cannot look at an answer before the commit, so any
 * condition they depend on must fail its own statement (failed-checks.ts).
 */
export type PhaseWork = ((tx: TxClient) => Promise<void>) | Statement[];

/**
 * A request this process owns, under a fencing token. Every phase is one local transaction that
 * first advances the key row (only if the token is still current, see ADVANCE_KEY), then does
 * its work; a stale owner's fence fails its statement (CHECKS.fenceLost), the phase rolls back
 * and answers LeaseLostError, so a zombie that wakes after a takeover cannot write. Fault
 * points bracket every commit.
 *
 * A phase's `work` (advance, finish) starts together with the fence: its first statements share
 * the fence's round trip, so it runs before the fence is known to hold. It must keep its effects
 * inside `tx` (a failed fence rolls the transaction back and the phase answers LeaseLostError),
 * and should lock shared rows only in that first round trip: a fenced-out owner holds them
 * until it learns it lost, without the key row. finishWith's work waits for the fence. Work
 * given as statements goes with the fence, and commits, in one round trip (PhaseWork).
 */
export class OwnedRequest {
  private point: string;
  /** Moves later when the request finishes: the answer is replayable for a window from then. */
  private expiry: Date;
  private readonly heartbeat: LeaseHeartbeat;

  constructor(
    private readonly deps: EngineDeps,
    readonly scope: Scope,
    private readonly row: OwnedRow,
  ) {
    this.point = row.recovery_point;
    this.expiry = row.expires_at;
    this.heartbeat = new LeaseHeartbeat(deps, {
      tenantId: scope.tenantId,
      operation: row.operation,
      key: scope.key,
      fencingToken: row.fencing_token,
      id: row.id,
      expiresAt: row.expires_at,
    });
  }

  /**
   * Runs `wait`, a call outside any transaction (a provider call, a probe), with the lease kept
   * alive meanwhile (lease-heartbeat.ts). Throws LeaseLostError without starting it when the
   * request is no longer ours: an owner stops before its next external call.
   */
  external<T>(wait: () => Promise<T>): Promise<T> {
    return this.heartbeat.during(wait);
  }

  get recoveryPoint(): string {
    return this.point;
  }
  /** The operation id this request was admitted under: an earlier version's after a bump. */
  get admittedAs(): string {
    return this.row.operation;
  }
  get fencingToken(): string {
    return this.row.fencing_token;
  }
  get resourceId(): string | null {
    return this.row.resource_id;
  }
  get firstRequestAt(): Date {
    return this.row.created_at;
  }
  get expiresAt(): Date {
    return this.expiry;
  }

  /** Commits the phase that moves the request to `to`, with `work` in the same transaction. */
  async advance(to: string, work: PhaseWork): Promise<void> {
    await this.commitPhase({ to, answer: null, work });
  }

  /**
   * Commits the final phase: `work`, the answer and `state = finished` in one transaction.
   * The answer is computed by the caller before the phase so the key row is locked first.
   */
  async finish(answer: JsonValue, work: PhaseWork): Promise<StoredAnswer> {
    await this.commitPhase({ to: FINISHED, answer, work });
    return this.answered(answer);
  }

  /**
   * The final phase when the answer depends on what the phase itself writes (the payment as
   * this transaction leaves it): the key row is locked and fenced first, then `work` runs and
   * returns the answer, which commits with `state = finished`.
   */
  async finishWith(work: (tx: TxClient) => Promise<JsonValue>): Promise<StoredAnswer> {
    let answer: JsonValue = null;
    await this.commitPhase({
      to: FINISHED,
      answer: null,
      work: async (tx) => {
        answer = await work(tx);
      },
      lockFirst: true,
      answerOf: () => answer,
    });
    return this.answered(answer);
  }

  /** The first answer, as the client gets it; a replay of it reads the stored copy. */
  private answered(answer: JsonValue): StoredAnswer {
    return {
      version: this.scope.operation.answerVersion,
      storedAs: 'inline',
      body: answer,
      resourceId: this.row.resource_id,
      firstRequestAt: this.row.created_at,
      expiresAt: this.expiry,
    };
  }

  /**
   * Ends an attempt that got no final answer without moving the recovery point: the lease ends
   * now, so the next retry or (after its backoff) the recovery worker resumes here. `timeout`
   * means the provider may have acted; enough of those make the request 'unknown'. `unasked`
   * means no call went out unanswered, and is not counted as an attempt. Returns the request's
   * state afterwards (null if it was no longer ours to release).
   */
  async release(
    outcome: 'timeout' | 'unavailable' | 'interrupted' | 'unasked',
  ): Promise<'started' | 'unknown' | null> {
    const { tenantId, key } = this.scope;
    const { backoffBaseMs, backoffCapMs, unknownAfterAttempts } = this.deps;
    const { rows } = await this.deps.pool.query<{ state: 'started' | 'unknown' }>(RELEASE_KEY, [
      tenantId,
      this.row.operation,
      key,
      this.row.fencing_token,
      outcome,
      unknownAfterAttempts,
      backoffBaseMs,
      backoffCapMs,
      ...this.rowAt(),
    ]);
    const state = rows[0]?.state ?? null;
    this.deps.log.warn(
      { recoveryPoint: this.point, attemptOutcome: outcome, state },
      'attempt released without a final answer',
    );
    return state;
  }

  /** The row's primary key, which names its partition (ownersRow in idempotency.sql.ts). */
  private rowAt(): [string, Date] {
    return [this.row.id, this.expiry];
  }

  private async commitPhase(phase: {
    to: string;
    answer: JsonValue;
    work: PhaseWork;
    /** Lock and fence the key row, run `work`, then advance with `answerOf()`. */
    lockFirst?: boolean;
    answerOf?: () => JsonValue;
  }): Promise<void> {
    const { tenantId, operation, key } = this.scope;
    const faultPrefix = `${operation.publicName}.${phase.to}`;
    const fence = [tenantId, this.row.operation, key, this.row.fencing_token, this.point];
    let expiresAt = this.expiry;
    // ADVANCE_KEY and FINISH_KEY fail (CHECKS.fenceLost) unless we still hold the request.
    const fencing = (answer: JsonValue): Statement => {
      if (phase.to !== FINISHED) {
        return {
          text: ADVANCE_KEY,
          values: [...fence, phase.to, this.deps.leaseMs, ...this.rowAt()],
        };
      }
      const toStore = answerToStore(this.scope, answer, {
        maxBytes: this.deps.answerMaxBytes,
        keyring: this.deps.keyring,
        admittedAs: this.row.operation,
      });
      const { ttlSeconds } = this.deps;
      const stored = [
        toStore.sealed,
        toStore.version,
        toStore.storedAs,
        toStore.outcome,
        ttlSeconds,
      ];
      return { text: FINISH_KEY, values: [...fence, ...stored, ...this.rowAt()] };
    };
    const fenced = (result: pg.QueryResult<{ expires_at?: Date }> | undefined) => {
      if (phase.to === FINISHED && result?.rows[0]?.expires_at !== undefined) {
        expiresAt = result.rows[0].expires_at;
      }
    };
    const beforeCommit = () => this.deps.faults.hit(`${faultPrefix}.before-commit`);
    const work = phase.work;
    const sentAtMs = Date.now();
    const transaction = Array.isArray(work)
      ? // The fence and the work's statements: one round trip, which commits (withOneRoundTrip).
        withOneRoundTrip(this.deps.pool, [fencing(phase.answer), ...work], {
          beforeSend: beforeCommit,
          afterSend: () => this.deps.faults.hit(`${faultPrefix}.commit-sent`),
        }).then(([result]) => fenced(result))
      : withTransaction(this.deps.pool, async (tx) => {
          const advance = async (answer: JsonValue) => {
            const { text, values } = fencing(answer);
            fenced(await tx.query(text, values));
          };
          if (phase.lockFirst === true) {
            // Locks the key row before any business row, as every phase does, so no deadlock.
            // Its work takes several round trips and locks shared rows, so it waits for the
            // fence.
            const locked = await tx.query(LOCK_KEY, [...fence, ...this.rowAt()]);
            if (locked.rowCount !== 1) throw new LeaseLostError(`${operation.id}/${tenantId}`);
            await work(tx);
            await advance(phase.answerOf?.() ?? null);
          } else {
            // The fence and the work's statements travel in one round trip (batching-
            // transaction.ts): the work runs before we know the fence held, and a failed
            // fence, which rolls it back, is the answer whatever the work met meanwhile.
            const [fencedIn, worked] = await Promise.allSettled([
              advance(phase.answer),
              startWork(() => work(tx)),
            ]);
            if (fencedIn.status === 'rejected') throw fencedIn.reason;
            if (worked.status === 'rejected') throw worked.reason;
          }
          await beforeCommit();
        });
    try {
      await transaction;
    } catch (error) {
      // Fenced out: the phase rolled back whole, and the request is someone else's now.
      if (isFailedCheck(error, CHECKS.fenceLost)) {
        throw new LeaseLostError(`${operation.id}/${tenantId}`);
      }
      const settled = await this.settleUnknownCommit(error, phase.to);
      if (settled === null) throw error;
      expiresAt = settled.expiresAt;
    }
    this.point = phase.to;
    this.expiry = expiresAt;
    this.heartbeat.renewed(sentAtMs); // the fence extended the lease
    logStep(this.deps, {
      msg: 'phase committed',
      recoveryPoint: phase.to,
      fencingToken: this.row.fencing_token,
    });
    await this.deps.faults.hit(`${faultPrefix}.after-commit`);
  }

  /**
   * A phase failed in a way that leaves its commit in doubt (the connection dropped, the backend
   * was terminated, the commit got no answer). The phase's own fenced write says whether it
   * happened: the key row stands at `to` under our token only if the transaction committed.
   * Our lease was extended by that very write, so nobody else can have moved the row since.
   * The row as committed: it committed and only the acknowledgement was lost. Null: it did not,
   * or that cannot be known yet; the caller sees the original error and may retry the phase.
   */
  private async settleUnknownCommit(
    error: unknown,
    to: string,
  ): Promise<{ expiresAt: Date } | null> {
    // A commit that could not be proven durable is not settled by a read that might see it,
    // and a statement PostgreSQL refused committed nothing: neither is read back.
    if (
      error instanceof LeaseLostError ||
      error instanceof FaultInjectedError ||
      error instanceof CommitUnconfirmedError ||
      !commitInDoubt(error)
    ) {
      return null;
    }
    // Read with a fence on the same connection, so the row comes back only from a server whose
    // standby holds it; when that cannot be proven, CommitUnconfirmedError (durable-read-back.ts).
    const { tenantId, key } = this.scope;
    const rows = await readBackDurably<{
      recovery_point: string;
      fencing_token: string;
      expires_at: Date;
    }>(this.deps.pool, { text: SELECT_KEY, values: [tenantId, [this.row.operation], key] });
    const row = rows[0];
    if (row?.recovery_point !== to || row.fencing_token !== this.row.fencing_token) return null;
    return { expiresAt: row.expires_at };
  }
}
