// An event as every reader gets it: the events read, the events stream and each webhook delivery send
// this one JSON shape, built from the events table's row by one function.

export const EVENT_TYPES = [
  'ignitionOn',
  'ignitionOff',
  'overspeed',
  'geofenceEnter',
  'geofenceExit',
  'deviceOffline',
  'deviceOnline',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export interface FleetEvent {
  id: number;
  type: EventType;
  imei: string;
  /** The position that raised it; for deviceOffline, the device's last one. */
  positionId: number;
  gpsTime: string;
  latitude: number;
  longitude: number;
  createdAt: string;
  /** `speed` and `speedLimitKmh` for overspeed, `geofenceId` and `geofenceName` for the geofence events. */
  attributes: Record<string, unknown>;
}

/** The events table's columns as pg reads them (bigints as strings). */
export interface EventRow {
  id: string;
  type: EventType;
  imei: string;
  position_id: string;
  gps_time: Date;
  latitude: number;
  longitude: number;
  attributes: Record<string, unknown>;
  created_at: Date;
}

/** The columns EventRow reads, for every statement that answers events. */
export const EVENT_COLUMNS = 'id, type, imei, position_id, gps_time, latitude, longitude, attributes, created_at';

export function fleetEvent(row: EventRow): FleetEvent {
  return {
    id: Number(row.id),
    type: row.type,
    imei: row.imei,
    positionId: Number(row.position_id),
    gpsTime: row.gps_time.toISOString(),
    latitude: row.latitude,
    longitude: row.longitude,
    createdAt: row.created_at.toISOString(),
    attributes: row.attributes,
  };
}

/** The channel a committed event is announced on (its payload: the highest id committed). */
export const EVENTS_CHANNEL = 'fleet_events';
