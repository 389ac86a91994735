-- Up Migration

-- A position dated further after its receipt than FILTER_MAX_AHEAD (a tracker's clock glitch) is stored
-- as filtered 'ahead': as the device's newest fix it would make every real fix after it late.
ALTER TABLE trip_locations DROP CONSTRAINT trip_locations_filtered_check;
ALTER TABLE trip_locations ADD CONSTRAINT trip_locations_filtered_check CHECK (filtered IN ('zero', 'jump', 'accuracy', 'ahead'));

-- Down Migration
UPDATE trip_locations SET filtered = NULL WHERE filtered = 'ahead';
ALTER TABLE trip_locations DROP CONSTRAINT trip_locations_filtered_check;
ALTER TABLE trip_locations ADD CONSTRAINT trip_locations_filtered_check CHECK (filtered IN ('zero', 'jump', 'accuracy'));
