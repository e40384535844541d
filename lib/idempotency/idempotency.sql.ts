/**
 * Every statement the engine runs. Parameters are positional; the comment above each one says
 * which. All run at READ COMMITTED. Leases are computed with the database clock (now()) so
 * processes with skewed clocks still agree on who holds a request.
 */
import { CHECKS, failUnless, type Check } from '../db/failed-checks.ts';
import type { Statement } from '../db/pipelined-statements.ts';
import { WITHOUT_SYNCHRONOUS_STANDBY } from '../db/replication.sql.ts';

/**
 * The final SELECT of a statement whose CTE `cte` changes at most one row: that row's
 * `columns`, or, when it changed none, a failed `check` (a left join keeps one row to test).
 * The statement then fails instead of answering no row, so a transaction whose commit travels in
 * the same round trip (withOneRoundTrip) rolls back rather than commit without it.
 */
function theRowOrFail(cte: string, columns: string[], check: Check): string {
  const [present] = columns;
  return `
SELECT ${columns.map((c) => `${cte}.${c}`).join(', ')}
  FROM (VALUES (true)) AS one LEFT JOIN ${cte} ON true
 WHERE ${failUnless(`${cte}.${present} IS NOT NULL`, check)}`;
}

/**
 * A scope may hold several generations: expired ones kept as metadata, and at most one live
 * one (unfinished, or finished within its window). Admission reads the newest; every statement
 * that changes a row names its state (started, unknown), which only the live one can be in.
 */
const ROW_COLUMNS = `
  k.id, k.operation, k.request_hash, k.request_hash_key, k.state, k.recovery_point, k.resource_id, k.fencing_token,
  (k.lease_expires_at IS NOT NULL AND k.lease_expires_at <= now()) AS lease_expired,
  GREATEST(0, EXTRACT(EPOCH FROM k.lease_expires_at - now()))::float8 AS lease_remaining_seconds,
  (k.state = 'finished' AND k.expires_at <= now()) AS expired,
  r.version AS response_version, r.stored_as AS response_stored_as, r.body AS response,
  r.sealed AS response_sealed,
  k.created_at, k.expires_at`;

/**
 * An owner's row, by its primary key, for the statements only an owner sends. A lookup by scope
 * cannot say which partition holds the row, so every one of them is opened, and a week of
 * kept metadata is a week of daily partitions, each costing executor startup on every phase
 * (docs/decisions/0052-an-owner-names-its-rows-partition.md). With expires_at, the partition
 * key, in the condition, the generic plan prunes at executor startup to the one partition that
 * holds the row. The owner's expires_at comes back through node-postgres as a JavaScript Date,
 * in milliseconds where PostgreSQL keeps microseconds, hence the millisecond either side; the
 * id, from a sequence, makes the match exact.
 *
 * A row whose expires_at moved since the owner read it matches nothing, and the statement
 * fails its fence as a row taken over would. Only two things move it: finishing later than
 * admission's grace (INSERT_KEY), after which the owner sends nothing more, and retention's
 * MOVE_UNFINISHED_KEYS, which leaves a row under a live lease where it is (retention.sql.ts).
 */
function ownersRow(id: string, expiresAt: string): string {
  return `id = ${id}
     AND expires_at BETWEEN ${expiresAt}::timestamptz - interval '1 millisecond'
                        AND ${expiresAt}::timestamptz + interval '1 millisecond'`;
}

/**
 * $1 tenant, $2 the operation's ids (scopeIdsOf: its current and earlier versions), $3 key. The
 * read-only fast path for replays and conflicts: the scope's newest generation, whatever its
 * state or expiry.
 */
export const SELECT_KEY = selectKey('');

/**
 * SELECT_KEY among the rows whose window is still open, with the same parameters. Whenever the
 * newest generation's window is open it is the one found, so a row found here is SELECT_KEY's
 * answer; none found says only that the newest, if there is one, expired or is unfinished past
 * its window, and SELECT_KEY must be asked. The condition on the partition key lets the generic
 * plan leave out, at executor startup, every partition of metadata only (ADR 0052): a replay
 * opens the partitions of the coming day or two, not a week of them.
 */
export const SELECT_LIVE_KEY = selectKey(`
   AND k.expires_at > now()`);

function selectKey(condition: string): string {
  return `
SELECT ${ROW_COLUMNS},
  ${WITHOUT_SYNCHRONOUS_STANDBY} AS durable_as_read
  FROM idempotency_keys k
  LEFT JOIN idempotency_responses r ON r.request_id = k.id AND r.expires_at = k.expires_at
 WHERE k.tenant_id = $1 AND k.operation = ANY($2::text[]) AND k.key = $3${condition}
 ORDER BY k.expires_at DESC
 LIMIT 1`;
}

/**
 * Serialises admissions of one scope until the admission transaction ends: the statement sent
 * first, right after BEGIN and in the same round trip. No unique index can span partitions,
 * so this lock, taken before INSERT_KEY looks for a live row, is what makes two first requests
 * (whichever partitions their rows would fall in) admit exactly one. A hash collision only
 * makes two unrelated scopes wait for each other. INSERT_KEY is a later statement, so its
 * snapshot is taken after the lock is held, even when both travel in one round trip.
 */
export function lockingScope(lockKey: bigint): Statement {
  return {
    text: 'SELECT pg_advisory_xact_lock($1::bigint)',
    values: [BigInt.asIntN(64, lockKey).toString()],
  };
}

/**
 * Admission, fused with the first phase's recovery point. Runs after
 * lockingScope, in its own statement so its snapshot sees every admission committed
 * before the lock was granted. It writes no phase-log row (ADR 0056): the new key row says all
 * such a row would, as ADVANCE_KEY explains. $1 tenant, $2 operation (the id written), $3 key, $4 request
 * hash, $5 first recovery point, $6 resource id, $7 lease ms, $8 ttl seconds, $9 the data key id
 * the request hash is keyed by, $10 the operation's ids (a live row under an earlier version
 * holds the scope too). Fails with CHECKS.admissionLost when a live row exists (someone else
 * admitted the key first). `after_expiry`: the scope had earlier generations, all expired (the
 * request is a retry of a forgotten key), which admission may not have read before (engine.ts).
 *
 * The window is set longer than the ttl by a lease, or a tenth of the ttl if that is less. A
 * request that finishes within that grace of its admission keeps it, so its finish changes no
 * indexed column: a heap-only update (ADR 0062). Its answer is then replayable for at least a
 * whole window after it was stored, as ever; a little longer, at most by the grace.
 */
export const INSERT_KEY = `
WITH earlier AS (
  SELECT bool_or(state <> 'finished' OR expires_at > now()) AS live
    FROM idempotency_keys
   WHERE tenant_id = $1 AND operation = ANY($10::text[]) AND key = $3
), admitted AS (
  INSERT INTO idempotency_keys
         (tenant_id, operation, key, request_hash, request_hash_key, state, recovery_point,
          resource_id, lease_expires_at, expires_at)
  SELECT $1, $2, $3, $4, $9, 'started', $5, $6,
         now() + make_interval(secs => $7::float8 / 1000),
         now() + make_interval(secs => $8::float8 + least($7::float8 / 1000, $8::float8 / 10))
    FROM earlier
   WHERE earlier.live IS NOT TRUE
  RETURNING id, fencing_token, operation, created_at, expires_at
)
SELECT admitted.id, admitted.fencing_token, admitted.operation, admitted.created_at,
       admitted.expires_at, earlier.live IS NOT NULL AS after_expiry
  FROM earlier LEFT JOIN admitted ON true
 WHERE ${failUnless('admitted.fencing_token IS NOT NULL', CHECKS.admissionLost)}`;

/**
 * Stores a finished request's answer; used by both ways of finishing. `finished` is a CTE of the
 * finishing UPDATE returning id, tenant_id, operation, key, fencing_token, expires_at. $v version,
 * $b the sealed answer (a binary envelope; null when stored as a reference), $s stored_as.
 *
 * The finish writes no phase-log row (ADR 0054): the finished key row says all such a row would.
 * Its token is the finishing owner's, since a token moves only by a takeover and a finished row
 * is never taken over; its updated_at is when it finished, since nothing updates it after; and
 * a second finish is refused by the row's own state, as every phase is by its recovery point.
 */
function storeAnswer(version: string, sealed: string, storedAs: string): string {
  return `
stored AS (
  INSERT INTO idempotency_responses (request_id, expires_at, version, stored_as, sealed)
  SELECT id, expires_at, ${version}, ${storedAs}, ${sealed} FROM finished
)`;
}

/**
 * Admission that decided the request at once (a business-rule refusal): the key row, still
 * owned under token 1 inside the admission transaction, finishes with the stored answer.
 * $1 tenant, $2 operation, $3 key, $4 response, $5 response version, $6 stored_as,
 * $7 outcome.
 */
export const FINISH_AT_ADMISSION = `
WITH finished AS (
  UPDATE idempotency_keys
     SET state = 'finished', recovery_point = 'finished', outcome = $7,
         lease_expires_at = NULL, updated_at = now(), waiting = false
   WHERE tenant_id = $1 AND operation = $2 AND key = $3 AND fencing_token = 1 AND state = 'started'
  RETURNING id, tenant_id, operation, key, fencing_token, expires_at
), ${storeAnswer('$5::smallint', '$4::bytea', '$6')}
SELECT expires_at FROM finished`;

/**
 * Takeover of an expired lease by a client retry: wins only if the row is still started, still
 * expired and still at the token we looked at. $1 tenant, $2 the row's operation, $3 key,
 * $4 observed token, $5 lease ms.
 */
export const TAKE_OVER_KEY = `
UPDATE idempotency_keys
   SET fencing_token = fencing_token + 1,
       lease_expires_at = now() + make_interval(secs => $5::float8 / 1000),
       updated_at = now(), waiting = false
 WHERE tenant_id = $1 AND operation = $2 AND key = $3
   AND state = 'started' AND fencing_token = $4 AND lease_expires_at <= now()
RETURNING id, fencing_token, operation, recovery_point, resource_id, created_at, expires_at`;

/**
 * The fence of every later phase: advances the recovery point (and the lease) only while we
 * still hold the token, and logs the phase. It locks the key row first, before the phase touches
 * business rows, so phases and takeovers always lock in the same order.
 *
 * Admission logs nothing (ADR 0056): until a request first advances, its key row tells its
 * admission, at its recovery point, under token 1 (every row is inserted with it), at its
 * created_at (the admitting transaction's now(), which the log's committed_at would be too).
 * The first advance moves the point away, so it logs the admission first, as it was
 * (`admission`): a request that has log rows has its admission among them, whether logged here
 * or by admission before 0056. A request admitted and finished without advancing, which is
 * every payment today, writes no phase-log row at all. $1 tenant, $2 the row's
 * operation, $3 key, $4 our token, $5 expected current point, $6 next point, $7 lease ms, $8 and
 * $9 the row's id and expires_at (ownersRow). Fails with CHECKS.fenceLost when we no longer hold
 * the request.
 */
export const ADVANCE_KEY = `
WITH advanced AS (
  UPDATE idempotency_keys
     SET recovery_point = $6,
         lease_expires_at = now() + make_interval(secs => $7::float8 / 1000),
         updated_at = now()
   WHERE ${ownersRow('$8', '$9')}
     AND tenant_id = $1 AND operation = $2 AND key = $3
     AND fencing_token = $4 AND state = 'started' AND recovery_point = $5
  RETURNING id, tenant_id, operation, key, fencing_token, created_at, expires_at
), admission AS (
  INSERT INTO idempotency_phase_log
         (request_id, tenant_id, operation, key, recovery_point, fencing_token, committed_at,
          expires_at)
  SELECT id, tenant_id, operation, key, $5, 1, created_at, expires_at FROM advanced
   WHERE NOT EXISTS (SELECT FROM idempotency_phase_log l WHERE l.request_id = advanced.id)
), logged AS (
  INSERT INTO idempotency_phase_log
         (request_id, tenant_id, operation, key, recovery_point, fencing_token, expires_at)
  SELECT id, tenant_id, operation, key, $6, fencing_token, expires_at FROM advanced
  RETURNING recovery_point
)${theRowOrFail('logged', ['recovery_point'], CHECKS.fenceLost)}`;

/** FINISH_KEY's answer: the finished row's expires_at, or a failed fence. */
const FINISHED_OR_FENCE_LOST = theRowOrFail('finished', ['expires_at'], CHECKS.fenceLost);

/**
 * The final phase's fence: finishes the request with its answer, only while we still hold the
 * token. The answer stays replayable for a whole window from now, however long the request took
 * (one that was unknown for days is not forgotten the moment it settles), so expires_at moves
 * later if it must. Admission set it past a window by a grace (INSERT_KEY), so a request that
 * finishes within that grace leaves it as it is, and the finish is heap-only: no index of the
 * table holds a column it changes (ADR 0062). $1 tenant, $2 the row's operation, $3 key, $4 our
 * token, $5 expected current point, $6 response, $7 response version, $8 stored_as, $9 outcome,
 * $10 ttl seconds, $11 and $12 the row's id and expires_at (ownersRow).
 * Returns the final expires_at; fails with CHECKS.fenceLost when we no longer hold the request.
 */
export const FINISH_KEY = `
WITH finished AS (
  UPDATE idempotency_keys
     SET recovery_point = 'finished',
         state = 'finished',
         outcome = $9,
         lease_expires_at = NULL,
         expires_at = greatest(expires_at, now() + make_interval(secs => $10)),
         updated_at = now(), waiting = false
   WHERE ${ownersRow('$11', '$12')}
     AND tenant_id = $1 AND operation = $2 AND key = $3
     AND fencing_token = $4 AND state = 'started' AND recovery_point = $5
  RETURNING id, tenant_id, operation, key, fencing_token, expires_at
), ${storeAnswer('$7::smallint', '$6::bytea', '$8')}${FINISHED_OR_FENCE_LOST}`;

/**
 * An owner's heartbeat while it waits outside a transaction (lease-heartbeat.ts): the lease moves
 * on only while the owner still holds the token. It changes nothing else, and a lease moved into
 * the future wakes no waiter (the trigger of migrations/0011 fires on a lease that ends).
 * $1 tenant, $2 the row's operation, $3 key, $4 our token, $5 lease ms, $6 and $7 the row's id
 * and expires_at (ownersRow). One row: still ours.
 */
export const HEARTBEAT_KEY = `
UPDATE idempotency_keys
   SET lease_expires_at = now() + make_interval(secs => $5::float8 / 1000)
 WHERE ${ownersRow('$6', '$7')}
   AND tenant_id = $1 AND operation = $2 AND key = $3 AND fencing_token = $4 AND state = 'started'
RETURNING 1`;

/**
 * Marks a key in flight as waited for (Prefer: wait): its next transition out of its owner's
 * hands notifies (the trigger of migrations/0011, after the update since 0028). The statements
 * that make such a transition (finishes, release, takeover, claims) clear the mark themselves.
 * Only at the token and lease the waiter saw: a row that moved on since is not marked, and the
 * waiter reads it again instead.
 * $1 tenant, $2 the row's operation, $3 key, $4 row id, $5 observed token.
 */
export const MARK_WAITING = `
UPDATE idempotency_keys
   SET waiting = true
 WHERE tenant_id = $1 AND operation = $2 AND key = $3 AND id = $4
   AND fencing_token = $5 AND state = 'started' AND lease_expires_at > now()
RETURNING 1`;

/**
 * Locks the key row for a phase that must compute its response before advancing, with the same
 * fence as ADVANCE_KEY. $1 tenant, $2 the row's operation, $3 key, $4 our token, $5 expected current
 * point, $6 and $7 the row's id and expires_at (ownersRow).
 */
export const LOCK_KEY = `
SELECT 1 FROM idempotency_keys
 WHERE ${ownersRow('$6', '$7')}
   AND tenant_id = $1 AND operation = $2 AND key = $3
   AND fencing_token = $4 AND state = 'started' AND recovery_point = $5
   FOR UPDATE`;

/**
 * Whether a released request is unknown now: its last unanswered attempt (a timeout) reached
 * the limit, or it was unknown when claimed (its last outcome a timeout at the limit, which only
 * an unknown row has) and this attempt asked nothing.
 */
const UNKNOWN_AFTER_RELEASE = `(($5 = 'timeout' AND attempts + 1 >= $6)
         OR ($5 = 'unasked' AND last_attempt_outcome = 'timeout' AND attempts >= $6))`;

/**
 * Gives the request back after an attempt that ended without a final answer, without moving
 * its recovery point. The lease ends now, so a client retry may take over at once; the worker
 * waits until next_attempt_at (exponential backoff). After $6 attempts that ended in a timeout
 * the request becomes 'unknown': reconciliation, not more calls, settles it.
 * $1 tenant, $2 the row's operation, $3 key, $4 our token, $5 attempt outcome ('timeout' | 'unavailable' |
 * 'interrupted': our own phase failed to commit | 'unasked': no call went out unanswered, which
 * is no attempt: the count, the last outcome and its time stay as they were, and a request
 * claimed from unknown (reconciliation, a re-drive) goes back to unknown),
 * $6 attempts before unknown, $7 backoff base ms, $8 backoff cap ms, $9 and $10 the row's id and
 * expires_at (ownersRow). Returns the new state.
 */
export const RELEASE_KEY = `
UPDATE idempotency_keys
   SET attempts = attempts + CASE WHEN $5 = 'unasked' THEN 0 ELSE 1 END,
       last_attempt_at = CASE WHEN $5 = 'unasked' THEN last_attempt_at ELSE now() END,
       last_attempt_outcome = CASE WHEN $5 = 'unasked' THEN last_attempt_outcome ELSE $5 END,
       state = CASE WHEN ${UNKNOWN_AFTER_RELEASE} THEN 'unknown' ELSE 'started' END,
       lease_expires_at = CASE WHEN ${UNKNOWN_AFTER_RELEASE} THEN NULL ELSE now() END,
       next_attempt_at = now() + make_interval(secs => least($7::float8 * power(2, attempts), $8::float8) / 1000),
       updated_at = now(), waiting = false
 WHERE ${ownersRow('$9', '$10')}
   AND tenant_id = $1 AND operation = $2 AND key = $3 AND fencing_token = $4 AND state = 'started'
RETURNING state`;

/**
 * Claims one request for settlement or a manual re-drive: from 'unknown', or from 'started'
 * with an expired lease, and only at the token the caller looked at. It becomes 'started' under
 * a new token. $1 tenant, $2 the operation's ids, $3 key, $4 observed token, $5 lease ms.
 */
export const CLAIM_KEY = `
UPDATE idempotency_keys
   SET state = 'started',
       fencing_token = fencing_token + 1,
       lease_expires_at = now() + make_interval(secs => $5::float8 / 1000),
       updated_at = now(), waiting = false
 WHERE tenant_id = $1 AND operation = ANY($2::text[]) AND key = $3 AND fencing_token = $4
   AND (state = 'unknown' OR (state = 'started' AND lease_expires_at <= now()))
RETURNING id, fencing_token, operation, recovery_point, resource_id, created_at, expires_at`;

/** Requests awaiting settlement, oldest first. $1 operations, $2 limit. */
export const SELECT_UNKNOWN_KEYS = `
SELECT tenant_id, operation, key, fencing_token, resource_id, attempts, last_attempt_at, created_at
  FROM idempotency_unfinished_keys
 WHERE state = 'unknown' AND operation = ANY($1)
 ORDER BY updated_at
 LIMIT $2`;

/** Records who or what settled or re-drove a request. $1 tenant, $2 operation, $3 key, $4 action,
 * $5 decided by, $6 reason, $7 provider reference. */
export const INSERT_INTERVENTION = `
INSERT INTO idempotency_interventions (tenant_id, operation, key, action, decided_by, reason, provider_reference)
VALUES ($1, $2, $3, $4, $5, $6, $7)`;

/**
 * The recovery worker's claim: takes over up to $2 expired, unfinished requests in one
 * statement, among the unfinished (idempotency_unfinished_keys, migrations/0027), each locked
 * and tested again in the table itself: the view is a union, which cannot be locked. SKIP
 * LOCKED lets several gateway processes sweep the same table without waiting on, or claiming,
 * each other's rows. $1 lease ms, $2 batch size, $3 operations it can resume.
 */
export const CLAIM_STALE_KEYS = `
UPDATE idempotency_keys AS k
   SET fencing_token = k.fencing_token + 1,
       lease_expires_at = now() + make_interval(secs => $1::float8 / 1000),
       updated_at = now(), waiting = false
  FROM (SELECT c.id, c.expires_at
          FROM idempotency_keys c
         WHERE (c.id, c.expires_at) IN (SELECT id, expires_at FROM idempotency_unfinished_keys)
           AND c.state = 'started' AND c.lease_expires_at <= now() AND c.operation = ANY($3)
           AND (c.next_attempt_at IS NULL OR c.next_attempt_at <= now())
         ORDER BY c.lease_expires_at
         LIMIT $2
           FOR UPDATE OF c SKIP LOCKED) AS stale
 WHERE k.id = stale.id AND k.expires_at = stale.expires_at
RETURNING k.id, k.tenant_id, k.operation, k.key, k.fencing_token, k.recovery_point, k.resource_id,
          k.created_at, k.expires_at`;

/**
 * Fleet-wide gauges, per operation, over the unfinished requests (migrations/0027). The age is of
 * started requests only (someone, or the worker, should be finishing them); an unknown outcome
 * waits for reconciliation and is counted by its own gauge. A stale lease is one that ran out
 * under an owner that stopped (died, wedged, paused): a live owner renews its lease, and a
 * request released on purpose to back off (RELEASE_KEY) ends its lease at the instant of its
 * last attempt, which a later owner's lease always outlasts.
 */
export const UNFINISHED_SUMMARY = `
SELECT operation,
       COALESCE(EXTRACT(EPOCH FROM now() - min(created_at) FILTER (WHERE state = 'started')), 0)::float8
         AS oldest_age_seconds,
       count(*) FILTER (WHERE state = 'started' AND lease_expires_at <= now()
                          AND (last_attempt_at IS NULL OR lease_expires_at > last_attempt_at))::int
         AS stale_leases,
       count(*) FILTER (WHERE state = 'unknown')::int AS unknown_outcomes
  FROM idempotency_unfinished_keys
 GROUP BY operation`;
