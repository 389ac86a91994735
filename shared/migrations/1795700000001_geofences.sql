-- Up Migration

-- Areas the event processor tests each fix against (geofenceEnter / geofenceExit), each with an optional
-- speed limit inside it. `area` is the GeoJSON Polygon or the circle the client gave, validated by the
-- gateway; a geofence applies to every device.
CREATE TABLE geofences (
  id                bigserial PRIMARY KEY,
  name              text NOT NULL,
  area              jsonb NOT NULL,
  speed_limit_kmh   double precision CHECK (speed_limit_kmh > 0),
  created_at        timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE geofences;
