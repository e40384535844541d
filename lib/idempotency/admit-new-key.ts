import type pg from 'pg';
import { CHECKS, isFailedCheck } from '../db/failed-checks.ts';
import type { Statement } from '../db/pipelined-statements.ts';
import { withOneRoundTrip, withTransaction } from '../db/pool.ts';
import { commitInDoubt } from '../db/durable-read-back.ts';
import { CommitUnconfirmedError } from '../db/lost-session.ts';
import { FaultInjectedError } from '../faults.ts';
import type { JsonValue } from '../canonical-json.ts';
import { FINISH_AT_ADMISSION, INSERT_KEY, lockingScope } from './idempotency.sql.ts';
import { logStep } from '../logging/request-trace.ts';
import { readKeyDurably } from './key-read.ts';
import { scopeIdsOf } from './operation.ts';
import { OwnedRequest } from './owned-request.ts';
import type { StoredRequestHash } from './request-hash.ts';
import { answerToStore, storedAnswer } from './stored-answer.ts';
import { scopeDigest } from './scope-identity.ts';
import type { EngineDeps, OwnedRow, Scope } from './types.ts';
import type { Admission } from './admission.ts';
import type { FirstPhase } from './first-phase.ts';

/** A new request admitted, and how it counts: a retry of a key whose window had passed, or not. */
export interface NewKeyAdmission {
  admission: Admission;
  executed: 'executed' | 'expired_retry';
}

/**
 * The first request of a key: the scope lock, the key's INSERT and the first phase, in one
 * transaction. 'changed' when a concurrent first request won the key (nothing of ours
 * committed); the engine then reads the row that did. A commit in doubt is settled here by
 * reading back the resource id this attempt minted, unless it could not be proven durable.
 */
export async function admitNewKey(
  deps: EngineDeps,
  scope: Scope,
  admission: { requestHash: StoredRequestHash; first: FirstPhase; afterExpiry: boolean },
): Promise<NewKeyAdmission | 'changed'> {
  const { first, requestHash } = admission;
  const { tenantId, operation, key } = scope;
  const { leaseMs, ttlSeconds, faults } = deps;
  const lock = lockingScope(scopeDigest(scope).readBigInt64BE(0));
  const inserting: Statement = {
    text: INSERT_KEY,
    values: [
      tenantId,
      operation.id,
      key,
      requestHash.digest,
      first.to,
      first.resourceId,
      leaseMs,
      ttlSeconds,
      requestHash.keyId,
      scopeIdsOf(operation),
    ],
  };
  const beforeCommit = `${operation.publicName}.${first.to}.before-commit`;
  let owned: Omit<OwnedRow, 'recovery_point' | 'resource_id'> & {
    decided?: JsonValue;
    after_expiry?: boolean;
  };
  // A retry of an expired key, as the insert found it, else (answer lost) as a read before did.
  const executed = (admitted?: { after_expiry?: boolean }) =>
    (admitted?.after_expiry ?? admission.afterExpiry) ? 'expired_retry' : 'executed';
  let answers: pg.QueryResult[] = [];
  try {
    if ('statements' in first) {
      // The scope lock, the key's INSERT and the phase's statements: one transaction that
      // commits at the end of one round trip. Nothing runs between them: `before-commit` is
      // hit before it is sent, and `commit-sent` while it is on its way.
      const [admitted, ...rest] = await withOneRoundTrip(
        deps.pool,
        [inserting, ...first.statements],
        {
          first: [lock],
          beforeSend: () => faults.hit(beforeCommit),
          afterSend: () => faults.hit(`${operation.publicName}.${first.to}.commit-sent`),
        },
      );
      owned = admitted!.rows[0] as typeof owned;
      answers = rest;
    } else {
      const work = first.work;
      owned = await withTransaction(
        deps.pool,
        async (tx) => {
          // BEGIN, the scope lock and the key's INSERT leave in one round trip.
          const { rows } = await tx.query<typeof owned>(inserting.text, inserting.values);
          const row = rows[0]!;
          const outcome = await work(tx);
          if (outcome?.decided !== undefined) {
            const answer = answerToStore(scope, outcome.decided, {
              maxBytes: deps.answerMaxBytes,
              keyring: deps.keyring,
              admittedAs: operation.id,
            });
            await tx.query(FINISH_AT_ADMISSION, [
              tenantId,
              operation.id,
              key,
              answer.sealed,
              answer.version,
              answer.storedAs,
              answer.outcome,
            ]);
            return { ...row, decided: outcome.decided };
          }
          await faults.hit(beforeCommit);
          return row;
        },
        { first: [lock] },
      );
    }
  } catch (error) {
    // A concurrent first request owns the key: nothing of ours committed.
    if (isFailedCheck(error, CHECKS.admissionLost)) return 'changed';
    // The admission's commit is in doubt (connection lost, backend terminated). It happened
    // only if the key row exists with the resource id this attempt minted: nobody else can
    // have written that id. Otherwise nothing was stored and the error stands.
    // Nor is one read back that could not be proven durable (CommitUnconfirmedError), and the
    // read proves itself on the server it reads from (readKeyDurably), else fails the same way.
    // A statement PostgreSQL refused (a duplicate reference, say) committed nothing.
    if (
      error instanceof FaultInjectedError ||
      error instanceof CommitUnconfirmedError ||
      !commitInDoubt(error)
    ) {
      throw error;
    }
    const row = await readKeyDurably(deps.pool, scope);
    if (row === undefined || row.resource_id !== first.resourceId) throw error;
    if (row.state === 'finished') {
      const answer = storedAnswer(row, scope, deps.keyring);
      return { admission: { kind: 'decided', answer }, executed: executed() };
    }
    owned = row;
    // Committed, but its answers were lost with the connection: the owner reads what it needs.
    answers = [];
  }
  logStep(deps, {
    msg: 'phase committed',
    recoveryPoint: owned.decided === undefined ? first.to : 'finished',
    fencingToken: owned.fencing_token,
  });
  if (owned.decided !== undefined) {
    const answer = {
      version: operation.answerVersion,
      storedAs: 'inline' as const,
      body: owned.decided,
      resourceId: first.resourceId,
      firstRequestAt: owned.created_at,
      expiresAt: owned.expires_at,
    };
    return { admission: { kind: 'decided', answer }, executed: executed(owned) };
  }
  await faults.hit(`${operation.publicName}.${first.to}.after-commit`);
  const request = new OwnedRequest(deps, scope, {
    ...owned,
    recovery_point: first.to,
    resource_id: first.resourceId,
  });
  return { admission: { kind: 'owned', request, via: 'new', answers }, executed: executed(owned) };
}
