-- Up Migration

-- When a device was last heard from, whatever its fix's time: its newest position (by gps_time) may be
-- an old fix or a fix dated ahead, but online and offline follow receipt. The trip-writer moves it
-- forward with every position it stores.
ALTER TABLE device_last_locations ADD COLUMN last_seen_at timestamptz;
UPDATE device_last_locations SET last_seen_at = received_at;
ALTER TABLE device_last_locations ALTER COLUMN last_seen_at SET NOT NULL;

-- Down Migration
ALTER TABLE device_last_locations DROP COLUMN last_seen_at;
