// Positions fit to use: the trip-writer stores every position it is sent (a device refused would send it
// again for ever) but marks those no one should count, with the reason, so that they never become a
// device's last location, reach a live stream or raise an event. The rules:
// - zero: latitude and longitude both 0, a receiver's placeholder for "no fix";
// - accuracy: an `accuracy` (metres) or `hdop` attribute above its limit (both off by default);
// - jump: the speed implied by the distance and time from the device's newest unfiltered fix above
//   FILTER_MAX_SPEED_KMH (1000 by default), a GPS jump no vehicle made.
// A limit of 0 turns its rule off.
import { Counter, type Registry } from 'prom-client';
import type { TripLocationCommand } from '@fleet/shared/schemas/trip-location.schema';

export type FilterReason = 'zero' | 'jump' | 'accuracy';
export const FILTER_REASONS: readonly FilterReason[] = ['zero', 'jump', 'accuracy'];

export interface FilterSettings {
  maxSpeedKmh: number;
  maxAccuracyMeters: number;
  maxHdop: number;
}

/** A fix the next ones are measured against. */
export interface Fix {
  gpsTimeMs: number;
  latitude: number;
  longitude: number;
}

const EARTH_RADIUS_KM = 6371.0088;
const radians = (degrees: number) => (degrees * Math.PI) / 180;

/** The great-circle distance between two fixes, in kilometres (haversine). */
export function distanceKm(a: Fix, b: Fix): number {
  const dLat = radians(b.latitude - a.latitude);
  const dLon = radians(b.longitude - a.longitude);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(radians(a.latitude)) * Math.cos(radians(b.latitude)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** A trip's fix. */
export function fixOf(trip: TripLocationCommand): Fix {
  return { gpsTimeMs: Date.parse(trip.gpsTime), latitude: trip.latitude, longitude: trip.longitude };
}

/** Whether `fix` takes the place of `than` as a device's newest: it is later, or there is none yet. */
export function isNewer(fix: Fix, than: Fix | undefined): boolean {
  return than === undefined || fix.gpsTimeMs > than.gpsTimeMs;
}

function numberAttribute(trip: TripLocationCommand, name: string): number | undefined {
  const value = trip.attributes?.[name];
  return typeof value === 'number' ? value : undefined;
}

/**
 * The reason each trip is filtered, or null, in the order given. `trips` are in lock order (by device,
 * then time); `newest` holds each device's newest unfiltered fix stored before, which a fix passing the
 * rules then replaces when it is newer. A late fix (older than that one) is measured against it too: the
 * implied speed is the distance over the time between them, whichever comes first.
 */
export function filterReasons(
  trips: readonly TripLocationCommand[],
  newest: ReadonlyMap<string, Fix>,
  settings: FilterSettings,
): Array<FilterReason | null> {
  const known = new Map(newest);
  return trips.map((trip) => {
    if (trip.latitude === 0 && trip.longitude === 0) return 'zero';
    const accuracy = numberAttribute(trip, 'accuracy');
    const hdop = numberAttribute(trip, 'hdop');
    if (settings.maxAccuracyMeters > 0 && accuracy !== undefined && accuracy > settings.maxAccuracyMeters) return 'accuracy';
    if (settings.maxHdop > 0 && hdop !== undefined && hdop > settings.maxHdop) return 'accuracy';
    const fix = fixOf(trip);
    const before = known.get(trip.imei);
    if (settings.maxSpeedKmh > 0 && before && before.gpsTimeMs !== fix.gpsTimeMs) {
      const hours = Math.abs(fix.gpsTimeMs - before.gpsTimeMs) / 3_600_000;
      if (distanceKm(before, fix) / hours > settings.maxSpeedKmh) return 'jump';
    }
    if (isNewer(fix, before)) known.set(trip.imei, fix);
    return null;
  });
}

/** Counts each position stored as filtered, by reason: `fleet_positions_filtered_total{reason}`. */
export function filteredCounter(registry: Registry): (reason: FilterReason) => void {
  const counter = new Counter({
    name: 'fleet_positions_filtered_total',
    help: 'Positions stored as filtered (not fit to use), by reason: zero, jump or accuracy',
    labelNames: ['reason'],
    registers: [registry],
  });
  // Every reason is served from the start, at 0, so that a rate over it is defined before the first one.
  for (const reason of FILTER_REASONS) counter.inc({ reason }, 0);
  return (reason) => counter.inc({ reason });
}
