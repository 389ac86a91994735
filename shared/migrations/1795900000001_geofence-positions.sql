-- Up Migration

-- How many positions a geofence's polygon has (0 for a circle): every event processor holds every
-- geofence in memory, so the gateway keeps their total under GEOFENCES_MAX_POSITIONS, summed from here.
ALTER TABLE geofences ADD COLUMN positions integer NOT NULL DEFAULT 0;
UPDATE geofences SET positions = (SELECT coalesce(sum(jsonb_array_length(ring)), 0) FROM jsonb_array_elements(area -> 'coordinates') AS ring)
WHERE area ->> 'type' = 'Polygon';

-- Down Migration
ALTER TABLE geofences DROP COLUMN positions;
