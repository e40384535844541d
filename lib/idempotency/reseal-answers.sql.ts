/**
 * Re-sealing stored answers under the keyring's first key (`ops reencrypt`). Safe beside live
 * traffic: a batch reads without locks and writes each row only if its body is still the one it
 * read (compare-and-set), so a row that changed or went with its partition meanwhile is skipped,
 * and a later run picks up whatever it missed.
 */

/**
 * Inline answers not yet sealed under key $1 (in clear, or under another key), after the cursor
 * ($2 request id, $3 expires_at as text: microseconds survive the round trip), in key order,
 * at most $4. Each with the scope its seal is bound to.
 *
 * The key is looked up per answer (LATERAL with a LIMIT, which the planner cannot flatten into
 * a join): a batch then reads its answers from the cursor in primary-key order and stops at $4.
 * As a plain join, the plan joined every answer after the cursor to every key, by hash or merge,
 * and sorted them to keep $4: each batch cost the whole table after it, and a pass over N answers
 * N²/$4.
 */
export const SELECT_ANSWERS_TO_RESEAL = `
SELECT r.request_id::text AS request_id, r.expires_at::text AS expires_at, r.body::text AS body,
       k.tenant_id, k.operation, k.key
  FROM idempotency_responses r
 CROSS JOIN LATERAL (
   SELECT k.tenant_id, k.operation, k.key
     FROM idempotency_keys k
    WHERE k.id = r.request_id AND k.expires_at = r.expires_at
    LIMIT 1) k
 WHERE r.stored_as = 'inline'
   AND (r.request_id, r.expires_at) > ($2::bigint, $3::timestamptz)
   AND NOT (jsonb_typeof(r.body) = 'string' AND starts_with(r.body #>> '{}', 'v1.' || $1 || '.'))
 ORDER BY r.request_id, r.expires_at
 LIMIT $4`;

/**
 * Writes re-sealed bodies, each only if the row still holds the body it was read with.
 * $1 request ids, $2 expires_at (text), $3 bodies as read (JSON text), $4 sealed envelopes.
 */
export const WRITE_RESEALED_ANSWERS = `
UPDATE idempotency_responses r
   SET body = to_jsonb(u.sealed)
  FROM unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::text[])
       AS u(request_id, expires_at, was, sealed)
 WHERE r.request_id = u.request_id AND r.expires_at = u.expires_at AND r.body = u.was::jsonb`;

/** Inline answers by the key that sealed them ('' for answers in clear). */
export const COUNT_ANSWERS_BY_KEY = `
SELECT CASE WHEN jsonb_typeof(body) = 'string' THEN split_part(body #>> '{}', '.', 2) ELSE '' END
         AS key_id,
       count(*)::int AS n
  FROM idempotency_responses
 WHERE stored_as = 'inline'
 GROUP BY 1`;

/**
 * Live request hashes by the key that made them ('' for plain SHA-256): a key still named here
 * must stay in the keyring until these rows leave their window (they cannot be re-keyed, the
 * command is not stored).
 */
export const COUNT_LIVE_HASHES_BY_KEY = `
SELECT coalesce(request_hash_key, '') AS key_id, count(*)::int AS n
  FROM idempotency_keys
 WHERE state <> 'finished' OR expires_at > now()
 GROUP BY 1`;
