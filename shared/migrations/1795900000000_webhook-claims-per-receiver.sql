-- Up Migration

-- Due deliveries are claimed a webhook at a time, each up to what it may have in flight (so that one
-- receiver that never answers cannot take every send): this index finds a webhook's oldest due ones
-- however many others wait before them.
CREATE INDEX webhook_deliveries_webhook_due_idx ON webhook_deliveries (webhook_id, next_attempt_at);

-- Down Migration
DROP INDEX webhook_deliveries_webhook_due_idx;
