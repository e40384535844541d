/**
 * Every statement the engine runs. Parameters are positional; the comment above each one says
 * which. All run at READ COMMITTED. Leases are computed with the database clock (now()) so
 * processes with skewed clocks still agree on who holds a request.
 */

const ROW_COLUMNS = `
  request_hash, state, recovery_point, resource_id, fencing_token,
  lease_expires_at, (lease_expires_at IS NOT NULL AND lease_expires_at <= now()) AS lease_expired,
  GREATEST(0, EXTRACT(EPOCH FROM lease_expires_at - now()))::float8 AS lease_remaining_seconds,
  response, response_version, created_at, expires_at`;

/** $1 tenant, $2 operation, $3 key. The read-only fast path for replays and conflicts. */
export const SELECT_KEY = `
SELECT ${ROW_COLUMNS}
  FROM idempotency_keys
 WHERE tenant_id = $1 AND operation = $2 AND key = $3`;

/**
 * Admission, fused with the first phase's recovery point and its phase-log entry.
 * $1 tenant, $2 operation, $3 key, $4 request hash, $5 first recovery point, $6 resource id,
 * $7 lease ms, $8 ttl seconds. No row back: someone else holds the key (under READ COMMITTED a
 * concurrent first insert is waited for, then we get nothing).
 */
export const INSERT_KEY = `
WITH admitted AS (
  INSERT INTO idempotency_keys
         (tenant_id, operation, key, request_hash, state, recovery_point, resource_id,
          lease_expires_at, expires_at)
  VALUES ($1, $2, $3, $4, 'started', $5, $6,
          now() + make_interval(secs => $7::float8 / 1000), now() + make_interval(secs => $8))
  ON CONFLICT ON CONSTRAINT idempotency_keys_scope_pk DO NOTHING
  RETURNING tenant_id, operation, key, recovery_point, fencing_token, created_at, expires_at
), logged AS (
  INSERT INTO idempotency_phase_log (tenant_id, operation, key, recovery_point, fencing_token)
  SELECT tenant_id, operation, key, recovery_point, fencing_token FROM admitted
)
SELECT fencing_token, created_at, expires_at FROM admitted`;

/**
 * Admission that decided the request at once (a business-rule refusal): the key row, still
 * owned under token 1 inside the admission transaction, finishes with the stored response.
 * $1 tenant, $2 operation, $3 key, $4 response, $5 response version.
 */
export const FINISH_AT_ADMISSION = `
WITH decided AS (
  UPDATE idempotency_keys
     SET state = 'finished', recovery_point = 'finished', response = $4, response_version = $5,
         lease_expires_at = NULL, updated_at = now()
   WHERE tenant_id = $1 AND operation = $2 AND key = $3 AND fencing_token = 1 AND state = 'started'
  RETURNING tenant_id, operation, key, fencing_token
)
INSERT INTO idempotency_phase_log (tenant_id, operation, key, recovery_point, fencing_token)
SELECT tenant_id, operation, key, 'finished', fencing_token FROM decided`;

/**
 * Takeover of an expired lease by a client retry: wins only if the row is still started, still
 * expired and still at the token we looked at. $1 tenant, $2 operation, $3 key, $4 observed
 * token, $5 lease ms.
 */
export const TAKE_OVER_KEY = `
UPDATE idempotency_keys
   SET fencing_token = fencing_token + 1,
       lease_expires_at = now() + make_interval(secs => $5::float8 / 1000),
       updated_at = now()
 WHERE tenant_id = $1 AND operation = $2 AND key = $3
   AND state = 'started' AND fencing_token = $4 AND lease_expires_at <= now()
RETURNING fencing_token, recovery_point, resource_id, created_at, expires_at`;

/**
 * The fence of every later phase: advances the recovery point (and the lease, or finishes with
 * the response) only while we still hold the token, and logs the phase. It locks the key row
 * first, before the phase touches business rows, so phases and takeovers always lock in the
 * same order. $1 tenant, $2 operation, $3 key, $4 our token, $5 expected current point,
 * $6 next point, $7 next state, $8 response (null unless finishing), $9 response version,
 * $10 lease ms.
 */
export const ADVANCE_KEY = `
WITH advanced AS (
  UPDATE idempotency_keys
     SET recovery_point = $6,
         state = $7,
         response = $8,
         response_version = $9,
         lease_expires_at = CASE WHEN $7 = 'finished' THEN NULL
                                 ELSE now() + make_interval(secs => $10::float8 / 1000) END,
         updated_at = now()
   WHERE tenant_id = $1 AND operation = $2 AND key = $3
     AND fencing_token = $4 AND state = 'started' AND recovery_point = $5
  RETURNING tenant_id, operation, key, fencing_token
)
INSERT INTO idempotency_phase_log (tenant_id, operation, key, recovery_point, fencing_token)
SELECT tenant_id, operation, key, $6, fencing_token FROM advanced
RETURNING recovery_point`;

/**
 * Locks the key row for a phase that must compute its response before advancing, with the same
 * fence as ADVANCE_KEY. $1 tenant, $2 operation, $3 key, $4 our token, $5 expected current point.
 */
export const LOCK_KEY = `
SELECT 1 FROM idempotency_keys
 WHERE tenant_id = $1 AND operation = $2 AND key = $3
   AND fencing_token = $4 AND state = 'started' AND recovery_point = $5
   FOR UPDATE`;

/**
 * Gives the request back after an attempt that ended without a final answer, without moving
 * its recovery point. The lease ends now, so a client retry may take over at once; the worker
 * waits until next_attempt_at (exponential backoff). After $6 attempts that ended in a timeout
 * the request becomes 'unknown': reconciliation, not more calls, settles it.
 * $1 tenant, $2 operation, $3 key, $4 our token, $5 attempt outcome ('timeout' | 'unavailable' |
 * 'interrupted': our own phase failed to commit),
 * $6 attempts before unknown, $7 backoff base ms, $8 backoff cap ms. Returns the new state.
 */
export const RELEASE_KEY = `
UPDATE idempotency_keys
   SET attempts = attempts + 1,
       last_attempt_at = now(),
       last_attempt_outcome = $5,
       state = CASE WHEN $5 = 'timeout' AND attempts + 1 >= $6 THEN 'unknown' ELSE 'started' END,
       lease_expires_at = CASE WHEN $5 = 'timeout' AND attempts + 1 >= $6 THEN NULL ELSE now() END,
       next_attempt_at = now() + make_interval(secs => least($7::float8 * power(2, attempts), $8::float8) / 1000),
       updated_at = now()
 WHERE tenant_id = $1 AND operation = $2 AND key = $3 AND fencing_token = $4 AND state = 'started'
RETURNING state`;

/**
 * Claims one request for settlement or a manual re-drive: from 'unknown', or from 'started'
 * with an expired lease, and only at the token the caller looked at. It becomes 'started' under
 * a new token. $1 tenant, $2 operation, $3 key, $4 observed token, $5 lease ms.
 */
export const CLAIM_KEY = `
UPDATE idempotency_keys
   SET state = 'started',
       fencing_token = fencing_token + 1,
       lease_expires_at = now() + make_interval(secs => $5::float8 / 1000),
       updated_at = now()
 WHERE tenant_id = $1 AND operation = $2 AND key = $3 AND fencing_token = $4
   AND (state = 'unknown' OR (state = 'started' AND lease_expires_at <= now()))
RETURNING fencing_token, recovery_point, resource_id, created_at, expires_at`;

/** Requests awaiting settlement, oldest first. $1 operations, $2 limit. */
export const SELECT_UNKNOWN_KEYS = `
SELECT tenant_id, operation, key, fencing_token, resource_id, attempts, last_attempt_at, created_at
  FROM idempotency_keys
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
 * statement. SKIP LOCKED lets several gateway processes sweep the same table without waiting
 * on, or claiming, each other's rows. $1 lease ms, $2 batch size, $3 operations it can resume.
 */
export const CLAIM_STALE_KEYS = `
UPDATE idempotency_keys AS k
   SET fencing_token = k.fencing_token + 1,
       lease_expires_at = now() + make_interval(secs => $1::float8 / 1000),
       updated_at = now()
  FROM (SELECT tenant_id, operation, key
          FROM idempotency_keys
         WHERE state = 'started' AND lease_expires_at <= now() AND operation = ANY($3)
           AND (next_attempt_at IS NULL OR next_attempt_at <= now())
         ORDER BY lease_expires_at
         LIMIT $2
           FOR UPDATE SKIP LOCKED) AS stale
 WHERE k.tenant_id = stale.tenant_id AND k.operation = stale.operation AND k.key = stale.key
RETURNING k.tenant_id, k.operation, k.key, k.fencing_token, k.recovery_point, k.resource_id,
          k.created_at, k.expires_at`;

/** Fleet-wide gauges, per operation, from the partial index of unfinished rows. */
export const UNFINISHED_SUMMARY = `
SELECT operation,
       EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS oldest_age_seconds,
       count(*) FILTER (WHERE state = 'started' AND lease_expires_at <= now())::int AS stale_leases,
       count(*) FILTER (WHERE state = 'unknown')::int AS unknown_outcomes
  FROM idempotency_keys
 WHERE state <> 'finished'
 GROUP BY operation`;
