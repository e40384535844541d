-- The provider-key uniqueness of payments and of their operations, held by hash indexes
-- (ADR 0055). A provider key is an HMAC of the request (0029, provider-keys.ts), so a B-tree over
-- it takes every insert on a random leaf page: after each checkpoint, nearly every insert into
-- it writes that page's full image to the WAL, and more of them the larger the table. Its entries
-- are also the key itself, some sixty bytes each, compared with the collation's strcoll.
--
-- A hash index holds four bytes of the key's hash per row, so it has far fewer pages to dirty,
-- and an insert hashes the key once. Hash indexes cannot be UNIQUE; an exclusion
-- constraint with `=` enforces the same thing (a concurrent insert of the same key waits for the
-- first to commit or roll back, then fails), with SQLSTATE 23P01 instead of 23505. The constraint
-- keeps its name, which provider-key-holder.ts matches.
--
-- Unique by the key alone, no longer by (tenant, key): the tenant is inside the HMAC, and a key
-- from before 0029 names its payment or operation id, so no two rows of different tenants ever
-- held one key. The lookups by (tenant, key) use the new index and filter on the tenant.
--
-- The exclusion constraint is built under the table's lock, reading every row: on a large table,
-- run this migration in a quiet window.
ALTER TABLE payments DROP CONSTRAINT payments_provider_key_uq;
ALTER TABLE payments
  ADD CONSTRAINT payments_provider_key_uq EXCLUDE USING hash (provider_key WITH =);

ALTER TABLE payment_operations DROP CONSTRAINT payment_operations_provider_key_uq;
ALTER TABLE payment_operations
  ADD CONSTRAINT payment_operations_provider_key_uq EXCLUDE USING hash (provider_key WITH =);
