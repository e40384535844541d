-- Keyed request hashes (docs/decisions/0001-keyed-hashes-and-encrypted-storage.md).
--
-- A request hash is now HMAC-SHA256 under a subkey of a data-encryption key, and the row names
-- that key, so a rotation (a new first key) never changes what a stored hash means: a retry is
-- checked with the key its first request was hashed with. NULL is the hash rows were written
-- with before: plain SHA-256, still honoured until those rows leave their window.
--
-- A nullable column without a default is a catalog change only: no partition is rewritten and
-- the lock is held for an instant, so this is safe on a live table of any size.
ALTER TABLE idempotency_keys ADD COLUMN request_hash_key text;

COMMENT ON COLUMN idempotency_keys.request_hash_key IS
  'id of the DATA_ENCRYPTION_KEYS key whose HMAC subkey made request_hash; NULL: plain SHA-256';

-- Stored answers (idempotency_responses.body) and signing secrets (webhook_endpoints.secret)
-- keep their columns: a sealed value is a v1 envelope (v1.<keyId>.<iv>.<tag>.<ciphertext>),
-- held as a JSON string in body and as text in secret. Rows written before (a JSON object, a
-- whsec_ secret) stay readable by their form until `ops reencrypt` seals them.
COMMENT ON COLUMN idempotency_responses.body IS
  'a JSON string holding a v1 envelope (AES-256-GCM); a JSON object is a row from before sealing';
COMMENT ON COLUMN webhook_endpoints.secret IS
  'a v1 envelope (AES-256-GCM) of the whsec_ signing secret; whsec_ in clear is a row from before sealing';
