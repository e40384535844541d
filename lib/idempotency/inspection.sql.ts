/**
 * Unfinished requests for people on call, oldest first, each with its phase history and every
 * intervention. A request that never advanced has no phase-log rows (ADR 0056; idempotency.sql.ts,
 * ADVANCE_KEY): its history is its admission, at the point it still stands at, under token 1, at
 * its created_at. $1 states, $2 limit. Read from idempotency_unfinished_keys (migrations/0027),
 * not from every key of every partition.
 */
export const LIST_UNFINISHED = `
SELECT k.tenant_id, k.operation, k.key, k.state, k.recovery_point, k.resource_id, k.fencing_token,
       k.attempts, k.last_attempt_at, k.last_attempt_outcome, k.lease_expires_at,
       (k.state = 'started' AND k.lease_expires_at <= now()) AS lease_expired,
       k.next_attempt_at, k.created_at,
       COALESCE((SELECT json_agg(json_build_object('recoveryPoint', l.recovery_point,
                                                   'fencingToken', l.fencing_token::text,
                                                   'committedAt', l.committed_at) ORDER BY l.committed_at)
                   FROM idempotency_phase_log l
                  WHERE l.request_id = k.id),
                json_build_array(json_build_object('recoveryPoint', k.recovery_point,
                                                   'fencingToken', '1',
                                                   'committedAt', k.created_at))) AS phases,
       COALESCE((SELECT json_agg(json_build_object('action', i.action, 'decidedBy', i.decided_by,
                                                   'reason', i.reason, 'decidedAt', i.decided_at) ORDER BY i.decided_at)
                   FROM idempotency_interventions i
                  WHERE i.tenant_id = k.tenant_id AND i.operation = k.operation AND i.key = k.key), '[]') AS interventions
  FROM idempotency_unfinished_keys k
 WHERE k.state = ANY($1)
 ORDER BY k.created_at
 LIMIT $2`;
