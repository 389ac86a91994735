// The trip-location request as the gateway accepts it: the shared wire schema, and the gateway's rules on
// time. A position may not come from further ahead of the server's clock than MAX_FUTURE_SKEW: a clock
// that far off would store positions no query for "now" ever finds, and make the writer create partitions
// for days that have not come. Nor may it be older than MAX_PAST_AGE, or than TRIP_RETENTION_DAYS when
// that is set: each distinct old day costs the writer a partition, so an unbounded past would let one
// token fill the table with thousands of them, and a position past retention would only be dropped.
import ms from 'ms';
import { trackerPositionSchema, tripLocationRequestSchema } from '@fleet/shared/schemas/trip-location.schema';
import type { z } from 'zod';

const DAY_MS = 86_400_000;

export interface TimeWindow {
  maxFutureSkewMs: number;
  maxPastAgeMs: number;
  /** Undefined: positions are kept for ever, and only MAX_PAST_AGE bounds the past. */
  retentionDays?: number | undefined;
}

function pastLimit(window: TimeWindow): { ms: number; message: string } {
  const retentionMs = window.retentionDays === undefined ? Infinity : window.retentionDays * DAY_MS;
  if (retentionMs < window.maxPastAgeMs) {
    return { ms: retentionMs, message: `Must be within the ${window.retentionDays}-day retention of positions` };
  }
  return { ms: window.maxPastAgeMs, message: `Must be at most ${ms(window.maxPastAgeMs, { long: true })} before the server's clock` };
}

/** A schema of positions, with the window on gpsTime added. */
function withinWindow<S extends z.ZodType<{ gpsTime: string }>>(schema: S, window: TimeWindow, now: () => number) {
  const futureMessage = `Must be at most ${ms(window.maxFutureSkewMs, { long: true })} ahead of the server's clock`;
  const past = pastLimit(window);
  return schema.superRefine((trip, ctx) => {
    const clock = now();
    const time = Date.parse(trip.gpsTime);
    const latest = clock + window.maxFutureSkewMs;
    const earliest = clock - past.ms;
    if (time > latest) {
      ctx.addIssue({ code: 'too_big', origin: 'date', maximum: latest, inclusive: true, path: ['gpsTime'], message: futureMessage });
    } else if (time < earliest) {
      ctx.addIssue({ code: 'too_small', origin: 'date', minimum: earliest, inclusive: true, path: ['gpsTime'], message: past.message });
    }
  });
}

export function tripRequestSchema(window: TimeWindow, now: () => number = Date.now) {
  return withinWindow(tripLocationRequestSchema, window, now);
}

/** A tracker protocol's position (speed and ignition may be unknown), within the same window. */
export function trackerPositionRequestSchema(window: TimeWindow, now: () => number = Date.now) {
  return withinWindow(trackerPositionSchema, window, now);
}

export type TripRequestSchema = ReturnType<typeof tripRequestSchema>;
export type TrackerPositionSchema = ReturnType<typeof trackerPositionRequestSchema>;
