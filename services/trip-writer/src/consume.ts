// The trip-writer's Kafka batch handler: trip-location commands, decoded with their wire schema, stored
// by trip-store, and answered with the row's id and the sentence the client reads in `information`.
import type { Pool } from 'pg';
import { tripLocationCommandSchema, type CommandHandler, type TripLocationCommand } from '@fleet/shared';
import { storeTripLocations } from './trip-store';

export function tripInformation(trip: TripLocationCommand, duplicate: boolean): string {
  return duplicate
    ? `Trip location of device ${trip.imei} at ${trip.gpsTime} was already recorded`
    : `Trip location of device ${trip.imei} at ${trip.gpsTime} has been recorded`;
}

export function consumeTripLocations(pool: Pool): CommandHandler<typeof tripLocationCommandSchema> {
  return {
    schema: tripLocationCommandSchema,
    async store(trips) {
      const rows = await storeTripLocations(pool, trips);
      return rows.map((row, index) => ({ ...row, information: tripInformation(trips[index]!, row.duplicate) }));
    },
  };
}
