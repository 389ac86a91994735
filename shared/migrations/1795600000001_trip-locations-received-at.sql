-- Up Migration

-- A live stream that reconnects is sent what was committed while it was away, by receipt, whatever the
-- fixes' days: a late upload lands in an old day's partition. A BRIN index finds each partition's
-- recently received blocks (rows are appended in receipt order) for a few pages of index, and costs a
-- write next to nothing; the (imei, gps_time) index narrows them to the stream's devices.
CREATE INDEX trip_locations_received_at_brin ON trip_locations USING brin (received_at);

-- Down Migration
DROP INDEX trip_locations_received_at_brin;
