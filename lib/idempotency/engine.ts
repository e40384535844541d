import type { JsonValue } from '../canonical-json.ts';
import { TAKE_OVER_KEY } from './idempotency.sql.ts';
import { logStep, type RequestTrace } from '../logging/request-trace.ts';
import type { KeyWaitOutcome } from '../metrics.ts';
import { readKey, readKeyDurably } from './key-read.ts';
import { waitForKey, waitOutcome } from './key-wait.ts';
import { assertIdempotencyKey } from './idempotency-key.ts';
import type { OperationDef } from './operation.ts';
import { MIN_LEASE_MS } from './lease-heartbeat.ts';
import { OwnedRequest } from './owned-request.ts';
import { admitNewKey } from './admit-new-key.ts';
import { keyedRequestHash, requestHashMatches } from './request-hash.ts';
import { storedAnswer } from './stored-answer.ts';
import { keyRefOf, metricLabels, scopeAnnotation, scopeText } from './scope-identity.ts';
import type { EngineDeps, KeyRow, OwnedRow, Scope } from './types.ts';
import type { Admission } from './admission.ts';
import type { FirstPhase } from './first-phase.ts';

/**
 * What a client is told to wait before retrying a key that is in flight. Most requests finish
 * within a provider round trip, so one second is a retry that usually finds the stored answer.
 */
export const IN_USE_RETRY_AFTER_SECONDS = 1;

/**
 * What a client is told to wait when its request awaits reconciliation: settling happens on
 * the reconciliation schedule, not within a retry's patience, so asking more often is waste.
 */
export const UNKNOWN_RETRY_AFTER_SECONDS = 30;

/** Admission re-reads a row that changed under it at most this often before answering in_use. */
const ADMISSION_MAX_ROUNDS = 3;

/**
 * A waiting request reads its key again at most this often (each wake, each lease that ran
 * out): a bound on the reads one request can cost, whatever happens to the row meanwhile.
 */
const WAIT_MAX_ROUNDS = 20;

/** A live owner holds the key: answered in_use, unless the request may wait (Prefer: wait). */
interface InFlight {
  kind: 'in_flight';
  row: KeyRow;
}

export type { Admission } from './admission.ts';
export type { FirstPhase } from './first-phase.ts';

/**
 * Scoped admission of idempotent requests. The database decides every race: the scope lock and
 * INSERT_KEY's live-row check pick the one first owner, a conditional UPDATE the one taker-over
 * of an expired lease, and the fencing token stops everyone else from writing.
 */
export class IdempotencyEngine {
  constructor(readonly deps: EngineDeps) {
    if (deps.leaseMs < MIN_LEASE_MS) {
      throw new Error(
        `a lease of ${deps.leaseMs} ms is too short to keep alive (${MIN_LEASE_MS} ms at least)`,
      );
    }
  }

  /** This engine working for one request: its lines carry the request, and admission annotates it. */
  forTrace(trace: RequestTrace): IdempotencyEngine {
    return new IdempotencyEngine({ ...this.deps, log: trace.log, trace });
  }

  /**
   * Admits `command` (validated and normalised) under `scope`. Its request hash is keyed by the
   * keyring's first key for a new row, and checked against an existing row by that row's own
   * key (or plain SHA-256 for rows from before keyed hashes).
   */
  async admit(input: {
    scope: Scope;
    command: JsonValue;
    /**
     * Given as a function, it is called only when the key is free to insert: a replay or a
     * conflict then never pays for what only a new request needs (ids, derived keys).
     */
    first: FirstPhase | (() => FirstPhase);
  }): Promise<Admission> {
    const { scope } = input;
    const { trace, keyring, recentScopes } = this.deps;
    let keyRef: string | undefined;
    if (trace) {
      // A retry of a scope met lately is logged with the reference computed the first time.
      const name = scopeText(scope);
      keyRef = recentScopes.keyRefOf(name) ?? keyRefOf(name, keyring);
      trace.annotate(scopeAnnotation(scope, keyring, keyRef));
    }
    const waitMs = this.deps.trace?.keyWaitMs ?? 0;
    const deadline = Date.now() + waitMs;
    for (let round = 0; ; round++) {
      const admission = await this.admitOnce(input, keyRef);
      if (admission.kind !== 'in_flight') {
        if (waitMs > 0 && round > 0) this.countWait(scope, waitOutcome(admission));
        return admission;
      }
      const remainingMs = deadline - Date.now();
      const woke =
        remainingMs > 0 && round < WAIT_MAX_ROUNDS
          ? await waitForKey(this.deps, { scope, row: admission.row, remainingMs })
          : 'timeout';
      if (woke === 'timeout' || woke === 'unavailable') {
        if (waitMs > 0) this.countWait(scope, woke === 'timeout' ? 'timed_out' : 'unavailable');
        return this.inUse(scope, admission.row.resource_id);
      }
    }
  }

  private countWait(scope: Scope, outcome: KeyWaitOutcome): void {
    this.deps.metrics.waits.inc({ ...metricLabels(scope), outcome });
  }

  /**
   * One admission: read, then decide or insert, re-reading a row that changed under it. A key
   * this process has not met (RecentScopes) whose first phase is statements is inserted with
   * no read before, and read only if taken: the order saves a round trip, the lock decides.
   */
  private async admitOnce(
    input: {
      scope: Scope;
      command: JsonValue;
      first: FirstPhase | (() => FirstPhase);
    },
    keyRef: string | undefined,
  ): Promise<Admission | InFlight> {
    const { scope, command } = input;
    const { keyring, admissions, recentScopes } = this.deps;
    const name = scopeText(scope);
    let first: FirstPhase | undefined;
    const firstPhase = () =>
      (first ??= typeof input.first === 'function' ? input.first() : input.first);
    const insertFirst = !recentScopes.has(name);
    recentScopes.remember(name, keyRef);
    for (let round = 0; round < ADMISSION_MAX_ROUNDS; round++) {
      // This process's admission of the scope, on its way, decides this request: a read now
      // could miss its commit, and this request would then send an admission only to lose it.
      const admitting = admissions.pending(name);
      if (admitting !== undefined) await admitting;
      // Read first: a replay or a conflict then costs one indexed read and no transaction
      // (and a fence more where commits wait for a standby: provenFinal).
      // This is not check-then-insert: ownership is still decided under the scope lock below.
      // A finished row past its window is only metadata now: the retry is a new request.
      // A first phase given as code reads first too: its lost insert costs a ROLLBACK more.
      const read =
        round === 0 && insertFirst && !admitting && 'statements' in firstPhase()
          ? undefined
          : await readKey(this.deps.pool, scope, {
              likelyLive: !insertFirst || round > 0 || !!admitting,
            });
      const existing =
        read === undefined ? undefined : await this.provenFinal(scope, command, read);
      if (existing !== undefined && !existing.expired) {
        const decided = await this.decide(scope, command, existing);
        if (decided !== 'changed') return decided;
        continue;
      }
      // Another request of this process is admitting the key: its row decides this one.
      const settling = admissions.pending(name);
      if (settling !== undefined) {
        await settling;
        continue;
      }
      const admitted = await admissions.run(name, () =>
        admitNewKey(this.deps, scope, {
          requestHash: keyedRequestHash(keyring, scope.operation, command),
          first: firstPhase(),
          afterExpiry: existing !== undefined,
        }),
      );
      if (admitted !== 'changed') {
        this.countExecuted(scope, admitted.executed);
        return admitted.admission;
      }
    }
    return this.inUse(scope, null);
  }

  /** Wraps a row claimed by the recovery worker. */
  adopt(scope: Scope, row: OwnedRow): OwnedRequest {
    return new OwnedRequest(this.deps, scope, row);
  }

  /**
   * The row to decide on. A final answer (a replay, a reused key's refusal) comes only from a row
   * proven durable. Where commits wait for a synchronous standby, a row may be a commit left
   * visible on the primary alone (a backend ended while its commit waited), which a failover
   * undoes (docs/decisions/0074). It is read again with a fence that waits for the standby, or
   * the read fails as CommitUnconfirmedError (DATABASE_UNAVAILABLE, to retry). A row in flight
   * or unknown answers nothing final, and is decided on as read.
   */
  private async provenFinal(
    scope: Scope,
    command: JsonValue,
    row: KeyRow,
  ): Promise<KeyRow | undefined> {
    if (row.durable_as_read || row.expired) return row;
    if (row.state !== 'finished' && this.sameRequest(command, row)) return row;
    return readKeyDurably(this.deps.pool, scope);
  }

  /**
   * Whether `command` is the row's request. The row's own hash key decides how (a rotation since
   * its first request changes nothing), and its own operation id (an earlier version's, after a
   * bump).
   */
  private sameRequest(command: JsonValue, row: KeyRow): boolean {
    const stored = { digest: row.request_hash, keyId: row.request_hash_key };
    return requestHashMatches(
      this.deps.keyring,
      { operation: { id: row.operation }, command },
      stored,
    );
  }

  private async decide(
    scope: Scope,
    command: JsonValue,
    row: KeyRow,
  ): Promise<Admission | InFlight | 'changed'> {
    const { metrics, keyring } = this.deps;
    const labels = metricLabels(scope);
    // Checked before the state: a key reused for another command is refused whether the first
    // request is finished, failed or still running — never replayed as if it were this one.
    if (!this.sameRequest(command, row)) {
      this.count(scope, 'key_reused');
      metrics.conflicts.inc({ ...labels, reason: 'different_request' });
      return { kind: 'reused' };
    }
    if (row.state === 'finished') {
      this.count(scope, 'replayed');
      metrics.replays.inc(labels);
      return { kind: 'replay', answer: storedAnswer(row, scope, keyring) };
    }
    if (row.state === 'unknown') {
      // Retries do not call the provider again: reconciliation settles it, then replays work.
      this.count(scope, 'in_use');
      metrics.conflicts.inc({ ...labels, reason: 'in_progress' });
      return {
        kind: 'unknown',
        retryAfterSeconds: UNKNOWN_RETRY_AFTER_SECONDS,
        resourceId: row.resource_id,
      };
    }
    if (!row.lease_expired) return { kind: 'in_flight', row };
    const { rows } = await this.deps.pool.query<OwnedRow>(TAKE_OVER_KEY, [
      scope.tenantId,
      row.operation,
      scope.key,
      row.fencing_token,
      this.deps.leaseMs,
    ]);
    const taken = rows[0];
    if (taken === undefined) return 'changed'; // another retry or the worker got there first
    metrics.takeovers.inc({ ...labels, by: 'retry' });
    this.count(scope, 'executed');
    return { kind: 'owned', request: new OwnedRequest(this.deps, scope, taken), via: 'takeover' };
  }

  private inUse(scope: Scope, resourceId: string | null): Admission {
    this.count(scope, 'in_use');
    this.deps.metrics.conflicts.inc({ ...metricLabels(scope), reason: 'in_progress' });
    return { kind: 'in_use', retryAfterSeconds: IN_USE_RETRY_AFTER_SECONDS, resourceId };
  }

  /** A new request admitted: counted as an expired retry when its key had been forgotten. */
  private countExecuted(scope: Scope, outcome: 'executed' | 'expired_retry'): void {
    this.count(scope, outcome);
    if (outcome === 'expired_retry') {
      this.deps.metrics.expiredRetries.inc(metricLabels(scope));
    }
  }

  private count(
    scope: Scope,
    outcome: 'executed' | 'expired_retry' | 'replayed' | 'in_use' | 'key_reused',
  ): void {
    this.deps.metrics.requests.inc({ ...metricLabels(scope), outcome });
    logStep(this.deps, { msg: 'admission', outcome });
  }

  /**
   * Checks a client's key before anything else (docs/api.md §2). An invalid key is refused with
   * IDEMPOTENCY_KEY_INVALID, stores nothing, and is counted here, where it is decided.
   */
  checkKey(operation: OperationDef, key: string): void {
    try {
      assertIdempotencyKey(key);
    } catch (error) {
      logStep(this.deps, {
        msg: 'admission',
        operation: operation.publicName,
        outcome: 'invalid_key',
      });
      this.deps.metrics.requests.inc({
        service: operation.service,
        operation: operation.publicName,
        outcome: 'invalid_key',
      });
      throw error;
    }
  }
}
