-- Up Migration

-- An event is raised once per device, type, position and geofence: a fix entering or leaving several
-- geofences at once raises one geofenceEnter or geofenceExit for each of them. Unique on the device, type
-- and position alone, all but the first were dropped as if raised before.
CREATE UNIQUE INDEX events_once_per_geofence ON events (imei, type, position_id, (coalesce(attributes->>'geofenceId', '')));
ALTER TABLE events DROP CONSTRAINT events_once;

-- Down Migration
DELETE FROM events e USING events kept
WHERE e.imei = kept.imei AND e.type = kept.type AND e.position_id = kept.position_id AND e.id > kept.id;
ALTER TABLE events ADD CONSTRAINT events_once UNIQUE (imei, type, position_id);
DROP INDEX events_once_per_geofence;
