-- A claim pushed next_attempt_at forward by its lease. next_attempt_at is the due index's column,
-- so no claim could be a heap-only (HOT) update: every claim of every delivery wrote a new entry
-- into the due index and the primary key. The lease moves to a column of its own that no index
-- holds ('-infinity': not claimed; never null, so a claim does not make the row longer), and
-- deliveries' pages keep half their room for the claim's new row versions: a version that does
-- not fit on its page goes to another one, with new index entries whatever the columns. Applies
-- to pages written from now on.
ALTER TABLE outbox_deliveries ADD COLUMN claimed_until timestamptz NOT NULL DEFAULT '-infinity';
ALTER TABLE outbox_deliveries SET (fillfactor = 50);
