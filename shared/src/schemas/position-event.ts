// A stored position as the API answers it: the position reads, and the live streams, which send what
// the trip-writer announces on <prefix>.positions once a position is committed. One shape for both, so
// a stream's event and a read of the same row are the same JSON. Unknown fields are null.
import type { Attributes, TripLocationCommand } from './trip-location.schema';

export interface PositionEvent {
  id: number;
  imei: string;
  gpsTime: string;
  latitude: number;
  longitude: number;
  /** Speed and ignition are null when the device's protocol did not report them. */
  speed: number | null;
  ignition: boolean | null;
  angle: number | null;
  satellite: number | null;
  door1: boolean | null;
  door2: boolean | null;
  temp: number | null;
  fuel_percentage: number | null;
  /** What the device reported beyond the columns, or null. */
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
