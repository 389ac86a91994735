// An AVL record as a position of this API: timestamp to gpsTime, coordinates, speed (km/h), angle,
// satellites; altitude and every IO element into attributes, each element keyed by its id; IO 239
// (ignition) to ignition, unknown when the record does not carry it.
import type { Attributes } from '@fleet/shared/schemas/trip-location.schema';
import type { AvlRecord } from './codec';

/** Teltonika's IO element 239: ignition, 1 on. */
export const IGNITION_IO = 239;

export interface RecordPosition {
  imei: string;
  gpsTime: string;
  latitude: number;
  longitude: number;
  speed: number;
  angle: number;
  satellite: number;
  ignition?: boolean;
  attributes: Attributes;
}

export function positionOf(imei: string, record: AvlRecord): RecordPosition {
  const attributes: Attributes = { altitude: record.altitude, priority: record.priority };
  if (record.eventIoId !== 0) attributes.eventIo = record.eventIoId;
  for (const [id, value] of record.io) attributes[String(id)] = value;
  const ignition = record.io.get(IGNITION_IO);
  return {
    imei,
    // A date beyond what Date holds is left for the schema to refuse.
    gpsTime: Number.isFinite(new Date(record.timestamp).getTime()) ? new Date(record.timestamp).toISOString() : String(record.timestamp),
    latitude: record.latitude,
    longitude: record.longitude,
    speed: record.speed,
    angle: record.angle,
    satellite: record.satellites,
    ...(ignition === undefined ? {} : { ignition: Number(ignition) !== 0 }),
    attributes,
  };
}
