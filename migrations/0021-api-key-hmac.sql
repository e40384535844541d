-- API keys stored as a keyed hash (docs/api.md §1.3): HMAC-SHA-256 under a subkey of the data
-- keys (HKDF, purpose "api-key-lookup"), so a dump of the table, without DATA_ENCRYPTION_KEYS,
-- is no oracle for guessing a key; an unsalted SHA-256 is one, and a fast one.
--
-- SQL does not know the data keys, so existing rows keep their SHA-256 until the key is next
-- presented: the tenants service authenticates it by the old hash, then writes its HMAC and
-- clears the hash in the same row (services/tenants/api-keys.ts); bootstrap keys are upgraded
-- at start. A key never presented again keeps its SHA-256 until it is revoked and removed.
ALTER TABLE api_keys ADD COLUMN key_hmac bytea;
-- The data key (its id in DATA_ENCRYPTION_KEYS) that key_hmac is made under: a data key may
-- leave the keyring only once no live key names it (docs/decisions/0040).
ALTER TABLE api_keys ADD COLUMN key_hmac_key text;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_key_hmac_uq UNIQUE (key_hmac);
-- key_hash: the legacy unsalted SHA-256, NULL once the key is authenticated again.
ALTER TABLE api_keys ALTER COLUMN key_hash DROP NOT NULL;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_hashed_ck
  CHECK (key_hmac IS NOT NULL OR key_hash IS NOT NULL);
ALTER TABLE api_keys ADD CONSTRAINT api_keys_key_hmac_key_ck
  CHECK ((key_hmac IS NULL) = (key_hmac_key IS NULL));

-- The clear prefix was the key's first 12 characters: most of a short bootstrap key. Kept now
-- is the scheme (sk_test_, sk_live_) and 4 characters, or 4 characters of a key without one.
UPDATE api_keys
   SET prefix = CASE WHEN prefix ~ '^sk_(test|live)_' THEN left(prefix, 12) ELSE left(prefix, 4) END
 WHERE prefix IS NOT NULL;

-- The SHA-256 of each tenant's key from before api_keys (0012), unread since: api_keys holds
-- the same hash (origin 'migrated'), which the upgrade above replaces on the key's next use.
UPDATE tenants SET api_key_hash = NULL WHERE api_key_hash IS NOT NULL;
