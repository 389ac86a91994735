-- Up Migration

-- An Idempotency-Key is remembered for a limited time (the group-writer's IDEMPOTENCY_KEY_TTL_HOURS),
-- then forgotten: the group keeps its row, and its command_id is cleared so that the key can create a
-- new group. The fingerprint of the request that created the group tells a retry (same body) from a
-- reuse of the key for another group (refused). Groups stored before this migration have none.
ALTER TABLE vehicle_groups ALTER COLUMN command_id DROP NOT NULL;
ALTER TABLE vehicle_groups ADD COLUMN request_fingerprint bytea CHECK (octet_length(request_fingerprint) = 32);

-- Only groups whose key is still remembered, in the order they expire: what the periodic purge reads.
CREATE INDEX vehicle_groups_remembered_keys_idx ON vehicle_groups (created_at) WHERE command_id IS NOT NULL;

-- Down Migration
DROP INDEX vehicle_groups_remembered_keys_idx;
ALTER TABLE vehicle_groups DROP COLUMN request_fingerprint;
-- A forgotten key is gone: such a group gets an id of its own that no command can carry.
UPDATE vehicle_groups SET command_id = 'forgotten:' || id WHERE command_id IS NULL;
ALTER TABLE vehicle_groups ALTER COLUMN command_id SET NOT NULL;
