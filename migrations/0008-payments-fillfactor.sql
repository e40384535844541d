-- Room on each payments page for the row's own updates. A payment is inserted PROCESSING and
-- updated moments later with the provider's answer (and again on capture, refund or cancel).
-- None of those updates touch an indexed column, so each can be a heap-only (HOT) update,
-- which writes no index entry at all, but only if the new row version fits on the page of the
-- old one. At the default fillfactor (100) a page is packed full by concurrent inserts, so
-- every update moved the row and wrote an entry into all four of the table's indexes.
-- Applies to pages written from now on; existing pages keep their packing until rewritten.
ALTER TABLE payments SET (fillfactor = 80);
