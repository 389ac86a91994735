// Positions fit to use: the trip-writer stores every position it is sent (a device refused would send it
// again for ever) but marks those no one should count, with the reason, so that they never become a
// device's last location, reach a live stream or raise an event. The rules:
// - zero: latitude and longitude both 0, a receiver's placeholder for "no fix";
// - accuracy: an `accuracy` (metres) or `hdop` attribute above its limit (both off by default);
// - jump: the speed implied by the distance and time from the device's newest unfiltered fix above
//   FILTER_MAX_SPEED_KMH (1000 by default), a GPS jump no vehicle made. Unless the track agrees with
//   it: a jump that ends FILTER_JUMP_CONFIRMATIONS fixes in a row (3 by default), each after the newest
//   unfiltered fix and each plausible from the one before, is a new track, and wins over that fix. So a
//   wrong fix that got in first (a cold start) holds a device back for two fixes, not for hours, and a
//   lone wrong fix in a good track is still the only one filtered.
// - ahead: a gpsTime more than FILTER_MAX_AHEAD (5 minutes by default) after the position's receipt, a
//   tracker's clock glitch: became the device's newest, it would make every real fix after it late, with
//   no events and a last location a day ahead.
// A limit of 0 turns its rule off.
import { Counter, type Registry } from 'prom-client';
import type { TripLocationCommand } from '@fleet/shared/schemas/trip-location.schema';

export type FilterReason = 'zero' | 'jump' | 'accuracy' | 'ahead';
export const FILTER_REASONS: readonly FilterReason[] = ['zero', 'jump', 'accuracy', 'ahead'];

export interface FilterSettings {
  maxSpeedKmh: number;
  maxAccuracyMeters: number;
  maxHdop: number;
  /** The fixes in a row that make a new track win over the newest unfiltered fix; 0: none ever does. */
  jumpConfirmations: number;
  /** How far a gpsTime may be after the position's receipt, in ms; 0: any. */
  maxAheadMs: number;
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

const impliedKmh = (a: Fix, b: Fix) => distanceKm(a, b) / (Math.abs(b.gpsTimeMs - a.gpsTimeMs) / 3_600_000);

/** Whether `fix` ends a run of `count` fixes, the last of `before` and itself, each plausible from the one before. */
function confirmsTrack(before: readonly Fix[], fix: Fix, count: number, maxSpeedKmh: number): boolean {
  if (count < 2 || before.length < count - 1) return false;
  const run = [...before.slice(-(count - 1)), fix];
  return run.every((each, i) => i === 0 || (each.gpsTimeMs > run[i - 1]!.gpsTimeMs && impliedKmh(run[i - 1]!, each) <= maxSpeedKmh));
}

/**
 * The reason each trip is filtered, or null, in the order given. `trips` are in lock order (by device,
 * then time); `newest` holds each device's newest unfiltered fix stored before, which a fix passing the
 * rules then replaces when it is newer. A late fix (older than that one) is measured against it too: the
 * implied speed is the distance over the time between them, whichever comes first. `jumps` holds, for a
 * device, the fixes stored as jumps since its newest unfiltered one, in time order (jumpsAfter in
 * trip-store.ts reads them once a batch has a jump).
 */
export function filterReasons(
  trips: readonly TripLocationCommand[],
  newest: ReadonlyMap<string, Fix>,
  settings: FilterSettings,
  jumps: ReadonlyMap<string, readonly Fix[]> = new Map(),
): Array<FilterReason | null> {
  const known = new Map(newest);
  const track = new Map<string, Fix[]>();
  return trips.map((trip) => {
    if (trip.latitude === 0 && trip.longitude === 0) return 'zero';
    const accuracy = numberAttribute(trip, 'accuracy');
    const hdop = numberAttribute(trip, 'hdop');
    if (settings.maxAccuracyMeters > 0 && accuracy !== undefined && accuracy > settings.maxAccuracyMeters) return 'accuracy';
    if (settings.maxHdop > 0 && hdop !== undefined && hdop > settings.maxHdop) return 'accuracy';
    const fix = fixOf(trip);
    if (settings.maxAheadMs > 0 && fix.gpsTimeMs - Date.parse(trip.receivedAt) > settings.maxAheadMs) return 'ahead';
    const before = known.get(trip.imei);
    if (settings.maxSpeedKmh > 0 && before && before.gpsTimeMs !== fix.gpsTimeMs && impliedKmh(before, fix) > settings.maxSpeedKmh) {
      const since = track.get(trip.imei) ?? [...(jumps.get(trip.imei) ?? [])];
      if (!isNewer(fix, before) || !confirmsTrack(since, fix, settings.jumpConfirmations, settings.maxSpeedKmh)) {
        if (isNewer(fix, before) && isNewer(fix, since.at(-1))) track.set(trip.imei, [...since, fix]);
        return 'jump';
      }
    }
    if (isNewer(fix, before)) {
      known.set(trip.imei, fix);
      // The jumps stored before are older than this fix now: a new track starts after it.
      track.set(trip.imei, []);
    }
    return null;
  });
}

/** Counts each position stored as filtered, by reason: `fleet_positions_filtered_total{reason}`. */
export function filteredCounter(registry: Registry): (reason: FilterReason) => void {
  const counter = new Counter({
    name: 'fleet_positions_filtered_total',
    help: 'Positions stored as filtered (not fit to use), by reason: zero, jump, accuracy or ahead',
    labelNames: ['reason'],
    registers: [registry],
  });
  // Every reason is served from the start, at 0, so that a rate over it is defined before the first one.
  for (const reason of FILTER_REASONS) counter.inc({ reason }, 0);
  return (reason) => counter.inc({ reason });
}
