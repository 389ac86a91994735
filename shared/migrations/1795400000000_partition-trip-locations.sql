-- Up Migration

-- trip_locations becomes a table partitioned by day of gps_time (UTC), so that retention drops whole
-- days instead of deleting rows. Every existing row keeps its id; ids continue from where the old table
-- left off. The trip-writer creates the partitions from here on (docs/adr/0005-trip-location-partitions.md).

-- The old table's names are freed for the new one: its key constraints, their indexes and its identity.
-- Its checks keep their names, so the new table names its own checks rather than getting them suffixed.
ALTER TABLE trip_locations RENAME TO trip_locations_unpartitioned;
ALTER TABLE trip_locations_unpartitioned RENAME CONSTRAINT trip_locations_pkey TO trip_locations_unpartitioned_pkey;
ALTER TABLE trip_locations_unpartitioned
  RENAME CONSTRAINT trip_locations_imei_gps_time_key TO trip_locations_unpartitioned_imei_gps_time_key;
ALTER SEQUENCE trip_locations_id_seq RENAME TO trip_locations_unpartitioned_id_seq;

-- A unique constraint on a partitioned table must hold the partition key, so the primary key is
-- (id, gps_time); the identity alone keeps ids unique across partitions.
CREATE TABLE trip_locations (
  id              bigint GENERATED ALWAYS AS IDENTITY,
  imei            text NOT NULL,
  gps_time        timestamptz NOT NULL,
  latitude        double precision NOT NULL CONSTRAINT trip_locations_latitude_check CHECK (latitude BETWEEN -90 AND 90),
  longitude       double precision NOT NULL CONSTRAINT trip_locations_longitude_check CHECK (longitude BETWEEN -180 AND 180),
  speed           double precision NOT NULL CONSTRAINT trip_locations_speed_check CHECK (speed >= 0),
  ignition        boolean NOT NULL,
  angle           double precision CONSTRAINT trip_locations_angle_check CHECK (angle BETWEEN 0 AND 360),
  satellite       integer CONSTRAINT trip_locations_satellite_check CHECK (satellite >= 0),
  door1           boolean,
  door2           boolean,
  temp            double precision,
  fuel_percentage double precision CONSTRAINT trip_locations_fuel_percentage_check CHECK (fuel_percentage BETWEEN 0 AND 100),
  received_at     timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT trip_locations_pkey PRIMARY KEY (id, gps_time),
  CONSTRAINT trip_locations_imei_gps_time_key UNIQUE (imei, gps_time)
) PARTITION BY RANGE (gps_time);

-- One partition per UTC day holding a row, and today to 7 days ahead, named and bounded as the
-- trip-writer names and bounds them (services/trip-writer/src/trip-partitions.ts).
DO $$
DECLARE
  day date;
BEGIN
  FOR day IN
    SELECT DISTINCT (gps_time AT TIME ZONE 'UTC')::date FROM trip_locations_unpartitioned
    UNION
    SELECT ((now() AT TIME ZONE 'UTC')::date + ahead) FROM generate_series(0, 7) AS ahead
  LOOP
    EXECUTE format(
      'CREATE TABLE %I PARTITION OF trip_locations FOR VALUES FROM (%L) TO (%L)',
      'trip_locations_p' || to_char(day, 'YYYYMMDD'),
      to_char(day, 'YYYY-MM-DD') || ' 00:00:00+00',
      to_char(day + 1, 'YYYY-MM-DD') || ' 00:00:00+00'
    );
  END LOOP;
END
$$;

INSERT INTO trip_locations
  (id, imei, gps_time, latitude, longitude, speed, ignition, angle, satellite, door1, door2, temp, fuel_percentage, received_at)
OVERRIDING SYSTEM VALUE
SELECT id, imei, gps_time, latitude, longitude, speed, ignition, angle, satellite, door1, door2, temp, fuel_percentage, received_at
FROM trip_locations_unpartitioned;

-- The next id is above every id the old table handed out, including those of rolled-back inserts.
SELECT setval(
  pg_get_serial_sequence('trip_locations', 'id'),
  GREATEST(
    COALESCE(pg_sequence_last_value('trip_locations_unpartitioned_id_seq'), 0),
    COALESCE((SELECT max(id) FROM trip_locations_unpartitioned), 0)
  ) + 1,
  false
);

DROP TABLE trip_locations_unpartitioned;

-- Down Migration

ALTER TABLE trip_locations RENAME TO trip_locations_partitioned;
ALTER TABLE trip_locations_partitioned RENAME CONSTRAINT trip_locations_pkey TO trip_locations_partitioned_pkey;
ALTER TABLE trip_locations_partitioned
  RENAME CONSTRAINT trip_locations_imei_gps_time_key TO trip_locations_partitioned_imei_gps_time_key;
ALTER SEQUENCE trip_locations_id_seq RENAME TO trip_locations_partitioned_id_seq;

CREATE TABLE trip_locations (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  imei            text NOT NULL,
  gps_time        timestamptz NOT NULL,
  latitude        double precision NOT NULL CONSTRAINT trip_locations_latitude_check CHECK (latitude BETWEEN -90 AND 90),
  longitude       double precision NOT NULL CONSTRAINT trip_locations_longitude_check CHECK (longitude BETWEEN -180 AND 180),
  speed           double precision NOT NULL CONSTRAINT trip_locations_speed_check CHECK (speed >= 0),
  ignition        boolean NOT NULL,
  angle           double precision CONSTRAINT trip_locations_angle_check CHECK (angle BETWEEN 0 AND 360),
  satellite       integer CONSTRAINT trip_locations_satellite_check CHECK (satellite >= 0),
  door1           boolean,
  door2           boolean,
  temp            double precision,
  fuel_percentage double precision CONSTRAINT trip_locations_fuel_percentage_check CHECK (fuel_percentage BETWEEN 0 AND 100),
  received_at     timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT trip_locations_imei_gps_time_key UNIQUE (imei, gps_time)
);

INSERT INTO trip_locations
  (id, imei, gps_time, latitude, longitude, speed, ignition, angle, satellite, door1, door2, temp, fuel_percentage, received_at)
OVERRIDING SYSTEM VALUE
SELECT id, imei, gps_time, latitude, longitude, speed, ignition, angle, satellite, door1, door2, temp, fuel_percentage, received_at
FROM trip_locations_partitioned;

SELECT setval(
  pg_get_serial_sequence('trip_locations', 'id'),
  GREATEST(
    COALESCE(pg_sequence_last_value('trip_locations_partitioned_id_seq'), 0),
    COALESCE((SELECT max(id) FROM trip_locations_partitioned), 0)
  ) + 1,
  false
);

DROP TABLE trip_locations_partitioned;
