-- Up Migration

-- Positions stored while a live stream's client was away are sent to it when it reconnects, read by
-- receipt from the last hour. Most are of the last day, whose partitions such a read prunes to; a late
-- upload (a fix over a day older than its receipt) lands in an old day's partition, which the read could
-- only find by probing every partition. The trip-writer notes each late one here, in the statement that
-- stores it, and its maintenance deletes what is past the streams' replay window.
CREATE TABLE late_positions (
  id          bigint PRIMARY KEY,
  imei        text NOT NULL,
  gps_time    timestamptz NOT NULL,
  received_at timestamptz NOT NULL
);
CREATE INDEX late_positions_imei_received_at_idx ON late_positions (imei, received_at);
CREATE INDEX late_positions_received_at_idx ON late_positions (received_at);

-- Down Migration
DROP TABLE late_positions;
