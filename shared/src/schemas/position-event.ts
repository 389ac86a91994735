// A committed position as the trip-writer announces it on <prefix>.positions and as live streams send
// it: the fields the position reads answer, with the row's id. Unknown fields are null, as the reads
// answer them.
import type { Attributes, TripLocationCommand } from './trip-location.schema';

export interface PositionEvent {
  id: number;
  imei: string;
  gpsTime: string;
  latitude: number;
  longitude: number;
  speed: number | null;
  ignition: boolean | null;
  angle: number | null;
  satellite: number | null;
  door1: boolean | null;
  door2: boolean | null;
  temp: number | null;
  fuel_percentage: number | null;
  attributes: Attributes | null;
  receivedAt: string;
}

export function positionEvent(command: TripLocationCommand, id: number): PositionEvent {
  return {
    id,
    imei: command.imei,
    gpsTime: command.gpsTime,
    latitude: command.latitude,
    longitude: command.longitude,
    speed: command.speed ?? null,
    ignition: command.ignition ?? null,
    angle: command.angle ?? null,
    satellite: command.satellite ?? null,
    door1: command.door1 ?? null,
    door2: command.door2 ?? null,
    temp: command.temp ?? null,
    fuel_percentage: command.fuel_percentage ?? null,
    attributes: command.attributes ?? null,
    receivedAt: command.receivedAt,
  };
}
