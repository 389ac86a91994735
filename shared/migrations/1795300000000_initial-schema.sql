-- Up Migration

-- Product categories are read by id through the gateway's cache; temperatures keep the precision they were given.
CREATE TABLE product_categories (
  id              uuid PRIMARY KEY,
  name            text NOT NULL,
  min_temperature numeric,
  max_temperature numeric,
  updated_at      timestamptz NOT NULL DEFAULT now()
);

-- API keys for category reads: only a SHA-256 hash of each key is stored.
CREATE TABLE api_keys (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  label      text NOT NULL,
  key_hash   bytea NOT NULL UNIQUE CHECK (octet_length(key_hash) = 32),
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE UNIQUE INDEX api_keys_active_label_key ON api_keys (label) WHERE revoked_at IS NULL;

-- One row per device position; (imei, gps_time) identifies a position, so retries and redeliveries
-- land on the row that already exists.
CREATE TABLE trip_locations (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  imei            text NOT NULL,
  gps_time        timestamptz NOT NULL,
  latitude        double precision NOT NULL CHECK (latitude BETWEEN -90 AND 90),
  longitude       double precision NOT NULL CHECK (longitude BETWEEN -180 AND 180),
  speed           double precision NOT NULL CHECK (speed >= 0),
  ignition        boolean NOT NULL,
  angle           double precision CHECK (angle BETWEEN 0 AND 360),
  satellite       integer CHECK (satellite >= 0),
  door1           boolean,
  door2           boolean,
  temp            double precision,
  fuel_percentage double precision CHECK (fuel_percentage BETWEEN 0 AND 100),
  received_at     timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT trip_locations_imei_gps_time_key UNIQUE (imei, gps_time)
);

-- A vehicle group is created by a command; command_id makes a redelivered or retried command land on
-- the group it already created.
CREATE TABLE vehicle_groups (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name       text NOT NULL,
  command_id text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE vehicle_group_members (
  vehicle_group_id bigint NOT NULL REFERENCES vehicle_groups (id) ON DELETE CASCADE,
  vehicle_id       bigint NOT NULL CHECK (vehicle_id > 0),
  PRIMARY KEY (vehicle_group_id, vehicle_id)
);
CREATE INDEX vehicle_group_members_vehicle_id_idx ON vehicle_group_members (vehicle_id);

-- Down Migration
DROP TABLE vehicle_group_members;
DROP TABLE vehicle_groups;
DROP TABLE trip_locations;
DROP TABLE api_keys;
DROP TABLE product_categories;
