-- Stored answers are sealed into a bytea column, in the envelope's binary form (ADR 0060). The
-- text form in `body` (a JSON string of base64url parts) took a third more room for the same
-- bytes, in the heap and in the WAL of every answer stored.
--
-- Answers stored before this stay in `body` until they leave their window or `ops reencrypt`
-- moves them: a row holds its answer in exactly one of the two columns. The column is added
-- without a rewrite; replacing the check reads every partition of answers under the table's
-- lock, which the retention job bounds to the replay window and the day before it.
ALTER TABLE idempotency_responses ADD COLUMN sealed bytea;

COMMENT ON COLUMN idempotency_responses.sealed IS
  'the answer sealed under a data key: a binary v1 envelope (AES-256-GCM); body holds answers stored before 0026';

ALTER TABLE idempotency_responses DROP CONSTRAINT idempotency_responses_stored_as_ck;
ALTER TABLE idempotency_responses ADD CONSTRAINT idempotency_responses_stored_as_ck CHECK (
  (stored_as = 'inline' AND num_nonnulls(body, sealed) = 1)
  OR (stored_as = 'reference' AND body IS NULL AND sealed IS NULL));
