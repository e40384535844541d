-- Several API keys per tenant, each with its own life (docs/api.md §1.3; issued and revoked
-- through the internal `tenants` router and `npm run ops -- api-keys`).
--
-- A key is stored as its SHA-256 only, as tenants.api_key_hash was: 32 random bytes are beyond
-- guessing, so no salt or slow hash is needed. `prefix` is the key's first characters, kept so
-- that a person can tell keys apart in a listing; it reveals nothing that helps guess the rest.
CREATE TABLE api_keys (
  id            uuid        NOT NULL,
  tenant_id     uuid        NOT NULL,
  -- NULL for a key carried over from tenants.api_key_hash: only its hash was ever kept.
  prefix        text,
  key_hash      bytea       NOT NULL,
  -- bootstrap: from BOOTSTRAP_TENANTS, replaced when the variable names another key;
  -- issued: created by an operator; migrated: the tenant's one key from before this table.
  origin        text        NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  -- Touched at most once a minute per key (api-keys.ts): a write per request would cost more
  -- than the answer is worth.
  last_used_at  timestamptz,
  expires_at    timestamptz,
  revoked_at    timestamptz,
  CONSTRAINT api_keys_pk PRIMARY KEY (id),
  CONSTRAINT api_keys_tenant_fk FOREIGN KEY (tenant_id) REFERENCES tenants (id),
  CONSTRAINT api_keys_key_hash_uq UNIQUE (key_hash),
  CONSTRAINT api_keys_origin_ck CHECK (origin IN ('bootstrap', 'issued', 'migrated'))
);

CREATE INDEX api_keys_tenant_ix ON api_keys (tenant_id, created_at);

INSERT INTO api_keys (id, tenant_id, prefix, key_hash, origin, created_at)
SELECT gen_random_uuid(), id, NULL, api_key_hash, 'migrated', created_at FROM tenants;

-- Kept, and no longer written: a gateway of the previous release, still running while this
-- one rolls out, authenticates by it. A later migration drops it once no such gateway can run.
ALTER TABLE tenants ALTER COLUMN api_key_hash DROP NOT NULL;
COMMENT ON COLUMN tenants.api_key_hash IS
  'superseded by api_keys (migrations/0012); NULL for tenants created since, never written';
