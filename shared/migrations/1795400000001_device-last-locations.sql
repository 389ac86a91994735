-- Up Migration

-- The newest position of each device, by gps_time, kept whole so that a last-location read is one
-- primary-key lookup that never touches trip_locations (partitioned, and pruned by retention).
-- trip_location_id names the row it came from, which may since have been removed by retention.
-- The trip-writer maintains it in the statement that stores a batch; a position arriving late (an
-- older gps_time) never replaces a newer one.
CREATE TABLE device_last_locations (
  imei             text PRIMARY KEY,
  trip_location_id bigint NOT NULL,
  gps_time         timestamptz NOT NULL,
  latitude         double precision NOT NULL,
  longitude        double precision NOT NULL,
  speed            double precision NOT NULL,
  ignition         boolean NOT NULL,
  angle            double precision,
  satellite        integer,
  door1            boolean,
  door2            boolean,
  temp             double precision,
  fuel_percentage  double precision,
  received_at      timestamptz NOT NULL
);

INSERT INTO device_last_locations
  (imei, trip_location_id, gps_time, latitude, longitude, speed, ignition, angle, satellite, door1, door2, temp, fuel_percentage, received_at)
SELECT DISTINCT ON (imei)
  imei, id, gps_time, latitude, longitude, speed, ignition, angle, satellite, door1, door2, temp, fuel_percentage, received_at
FROM trip_locations
ORDER BY imei, gps_time DESC;

-- Down Migration
DROP TABLE device_last_locations;
