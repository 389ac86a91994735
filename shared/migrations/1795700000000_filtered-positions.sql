-- Up Migration

-- A position the trip-writer stored but no one should count (latitude and longitude both 0, a jump no
-- vehicle made, a fix less accurate than the operator's limit) carries the reason; the reads, the last
-- location, the live streams and the events leave it out. NULL: a position fit to use.
ALTER TABLE trip_locations ADD COLUMN filtered text CHECK (filtered IN ('zero', 'jump', 'accuracy'));

-- Down Migration
ALTER TABLE trip_locations DROP COLUMN filtered;
