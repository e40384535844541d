-- Retention of the outbox and the inbox (lib/outbox/outbox-retention.ts, ADR 0036): events past
-- their window, with their finished deliveries, and inbox rows past the same window are deleted
-- in small batches. The batches find their rows by age through these block-range indexes: both
-- tables only ever append, so each range of pages spans a short stretch of time, and the index
-- is a few pages that inserts rarely touch (no WAL per row, unlike a B-tree on the column).
CREATE INDEX outbox_events_created_brin ON outbox_events USING brin (created_at);
CREATE INDEX inbox_messages_processed_brin ON inbox_messages USING brin (processed_at);
