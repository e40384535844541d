/**
 * Re-sealing stored answers under the keyring's first key (`ops reencrypt`). Safe beside live
 * traffic: a batch reads without locks and writes each row only if its body is still the one it
 * read (compare-and-set), so a row that changed or went with its partition meanwhile is skipped,
 * and a later run picks up whatever it missed.
 */

/** The key id COUNT_ANSWERS_BY_KEY gives a `sealed` value that names none. */
export const NOT_AN_ENVELOPE = '(not an envelope)';

/**
 * A stored answer as text, whichever column holds it: the binary envelope as bytea's text form
 * (\x and hex), or `body` as JSON text. What a re-seal compares to know the row is unchanged.
 */
const STORED_AS_TEXT = `coalesce(r.sealed::text, r.body::text)`;

/**
 * Inline answers not yet in the binary form under the first key (in clear, in the text form, or
 * under another key), after the cursor ($2 request id, $3 expires_at as text: microseconds
 * survive the round trip), in key order, at most $4. Each with the scope its seal is bound to.
 * $1 is the bytes every binary envelope under the first key starts with (envelope.ts
 * binaryEnvelopePrefix), so the format is spelled out in one place.
 *
 * The key is looked up per answer (LATERAL with a LIMIT, which the planner cannot flatten into
 * a join): a batch then reads its answers from the cursor in primary-key order and stops at $4.
 * As a plain join, the plan joined every answer after the cursor to every key, by hash or merge,
 * and sorted them to keep $4: each batch cost the whole table after it, and a pass over N answers
 * N²/$4.
 */
export const SELECT_ANSWERS_TO_RESEAL = `
SELECT r.request_id::text AS request_id, r.expires_at::text AS expires_at,
       ${STORED_AS_TEXT} AS stored, r.sealed, r.body::text AS body,
       k.tenant_id, k.operation, k.key
  FROM idempotency_responses r
 CROSS JOIN LATERAL (
   SELECT k.tenant_id, k.operation, k.key
     FROM idempotency_keys k
    WHERE k.id = r.request_id AND k.expires_at = r.expires_at
    LIMIT 1) k
 WHERE r.stored_as = 'inline'
   AND (r.request_id, r.expires_at) > ($2::bigint, $3::timestamptz)
   AND (r.sealed IS NULL OR substring(r.sealed FROM 1 FOR octet_length($1::bytea)) <> $1::bytea)
 ORDER BY r.request_id, r.expires_at
 LIMIT $4`;

/**
 * Writes re-sealed answers in the binary form, each only if the row still holds the answer it
 * was read with. $1 request ids, $2 expires_at (text), $3 answers as read (STORED_AS_TEXT),
 * $4 sealed envelopes (bytea's text form).
 */
export const WRITE_RESEALED_ANSWERS = `
UPDATE idempotency_responses r
   SET sealed = u.sealed::bytea, body = NULL
  FROM unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::text[])
       AS u(request_id, expires_at, was, sealed)
 WHERE r.request_id = u.request_id AND r.expires_at = u.expires_at
   AND ${STORED_AS_TEXT} = u.was`;

/**
 * Inline answers by the key that sealed them ('' for answers in clear, NOT_AN_ENVELOPE for bytes
 * too short or of another format to name one: counted, so that a bad row cannot fail the count).
 * CASE, unlike AND, tests its branches in order, so get_byte never reads past the end.
 */
export const COUNT_ANSWERS_BY_KEY = `
SELECT CASE WHEN sealed IS NOT NULL AND octet_length(sealed) < 2 THEN '${NOT_AN_ENVELOPE}'
            WHEN sealed IS NOT NULL AND get_byte(sealed, 0) <> 1 THEN '${NOT_AN_ENVELOPE}'
            WHEN sealed IS NOT NULL
            THEN encode(substring(sealed FROM 3 FOR get_byte(sealed, 1)), 'escape')
            WHEN jsonb_typeof(body) = 'string' THEN split_part(body #>> '{}', '.', 2)
            ELSE '' END
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
