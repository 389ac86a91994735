-- Up Migration

-- A device's own speed limit (PATCH /fleet/api/v1/devices/{imei}), for any device that reports, whether
-- or not the tracker registry knows it. Without a row, OVERSPEED_LIMIT_KMH counts.
CREATE TABLE device_settings (
  imei              text PRIMARY KEY,
  speed_limit_kmh   double precision CHECK (speed_limit_kmh > 0),
  updated_at        timestamptz NOT NULL DEFAULT now()
);

-- What the event processor knows of each device, written in the transaction that raises its events:
-- the newest position it has processed (by id, so that a redelivered position is recognised, and by
-- gpsTime, so that a late one changes nothing), and the state the events are changes of.
CREATE TABLE event_device_states (
  imei               text PRIMARY KEY,
  last_position_id   bigint NOT NULL,
  last_gps_time      timestamptz NOT NULL,
  last_received_at   timestamptz NOT NULL,
  latitude           double precision NOT NULL,
  longitude          double precision NOT NULL,
  ignition           boolean,
  overspeed          boolean NOT NULL DEFAULT false,
  geofence_ids       bigint[] NOT NULL DEFAULT '{}',
  offline            boolean NOT NULL DEFAULT false
);

-- The offline sweep's question: the online devices silent the longest.
CREATE INDEX event_device_states_online_idx ON event_device_states (last_received_at) WHERE NOT offline;

-- Events, raised once each: unique on (device, type, position). Ids are taken under one advisory lock
-- held until commit, so they grow in commit order and a reader resuming after an id misses nothing.
CREATE TABLE events (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  type         text NOT NULL,
  imei         text NOT NULL,
  position_id  bigint NOT NULL,
  gps_time     timestamptz NOT NULL,
  latitude     double precision NOT NULL,
  longitude    double precision NOT NULL,
  attributes   jsonb NOT NULL DEFAULT '{}',
  created_at   timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT events_once UNIQUE (imei, type, position_id)
);

CREATE INDEX events_imei_idx ON events (imei, id);

-- Where events are POSTed. The secret signs each delivery, so it is kept as given; it is never answered.
CREATE TABLE webhooks (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  url         text NOT NULL,
  -- NULL: every type.
  types       text[],
  secret      text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- One row per event a webhook has still to receive, written with the event: the pending work survives
-- any restart. A delivered or dropped delivery is deleted.
CREATE TABLE webhook_deliveries (
  webhook_id       bigint NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event_id         bigint NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  created_at       timestamptz NOT NULL DEFAULT now(),
  last_error       text,
  PRIMARY KEY (webhook_id, event_id)
);

CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at);
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id);

-- Down Migration
DROP TABLE webhook_deliveries;
DROP TABLE webhooks;
DROP TABLE events;
DROP TABLE event_device_states;
DROP TABLE device_settings;
