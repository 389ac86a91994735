-- Up Migration

-- Positions from real trackers (the OsmAnd protocol, Teltonika's codecs) carry more than the JSON API's
-- columns: the rest is kept whole in attributes, a JSON object. Their protocols may not report the
-- ignition or the speed at all, so either may be unknown (null) instead of invented; the JSON and form
-- API still require both. On the partitioned trip_locations, these changes reach every partition and
-- are catalogue changes only: no row is rewritten.
ALTER TABLE trip_locations ADD COLUMN attributes jsonb CHECK (jsonb_typeof(attributes) = 'object');
ALTER TABLE trip_locations ALTER COLUMN ignition DROP NOT NULL;
ALTER TABLE trip_locations ALTER COLUMN speed DROP NOT NULL;
ALTER TABLE device_last_locations ADD COLUMN attributes jsonb CHECK (jsonb_typeof(attributes) = 'object');
ALTER TABLE device_last_locations ALTER COLUMN ignition DROP NOT NULL;
ALTER TABLE device_last_locations ALTER COLUMN speed DROP NOT NULL;

-- The device registry: the only devices the tracker protocols accept. A device's key is shown once,
-- when it is made; only its SHA-256 is kept (the key is 32 random bytes, so a plain hash cannot be
-- reversed by guessing), and it is looked up by that hash.
CREATE TABLE devices (
  imei           text PRIMARY KEY,
  name           text CHECK (char_length(name) BETWEEN 1 AND 200),
  key_hash       bytea NOT NULL UNIQUE CHECK (octet_length(key_hash) = 32),
  created_at     timestamptz NOT NULL DEFAULT now(),
  key_rotated_at timestamptz
);

-- Down Migration
DROP TABLE devices;
-- Positions of unknown ignition or speed cannot be kept under NOT NULL: they go, as their protocols' rows.
DELETE FROM device_last_locations WHERE ignition IS NULL OR speed IS NULL;
DELETE FROM trip_locations WHERE ignition IS NULL OR speed IS NULL;
ALTER TABLE device_last_locations ALTER COLUMN speed SET NOT NULL;
ALTER TABLE device_last_locations ALTER COLUMN ignition SET NOT NULL;
ALTER TABLE device_last_locations DROP COLUMN attributes;
ALTER TABLE trip_locations ALTER COLUMN speed SET NOT NULL;
ALTER TABLE trip_locations ALTER COLUMN ignition SET NOT NULL;
ALTER TABLE trip_locations DROP COLUMN attributes;
