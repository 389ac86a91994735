// The trip-location request as the gateway accepts it: the shared wire schema, and the gateway's rule
// on time, that a position may not come from further ahead of the server's clock than MAX_FUTURE_SKEW.
// A clock that far off would otherwise store positions no query for "now" ever finds, and make the
// writer create partitions for days that have not come.
import ms from 'ms';
import { tripLocationRequestSchema } from '@fleet/shared';

export function tripRequestSchema(maxFutureSkewMs: number, now: () => number = Date.now) {
  const message = `Must be at most ${ms(maxFutureSkewMs, { long: true })} ahead of the server's clock`;
  return tripLocationRequestSchema.superRefine((trip, ctx) => {
    const latest = now() + maxFutureSkewMs;
    if (Date.parse(trip.gpsTime) > latest) {
      ctx.addIssue({ code: 'too_big', origin: 'date', maximum: latest, inclusive: true, path: ['gpsTime'], message });
    }
  });
}

export type TripRequestSchema = ReturnType<typeof tripRequestSchema>;
