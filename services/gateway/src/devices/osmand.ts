// The OsmAnd protocol, as the OsmAnd app and Traccar Client send it, read into positions of this API.
// Two shapes: the parameters of a URL (or of a form body), and Traccar Client's JSON (version 9 on).
// What a position reports beyond the columns is kept in its attributes. A field the protocol leaves out
// stays unknown: the speed and the ignition are never invented, and a missing time is the receipt's.
import { AppError } from '@fleet/shared/errors';
import { decimalNumber } from '@fleet/shared/schemas/coercion';
import type { Attributes } from '@fleet/shared/schemas/trip-location.schema';

export type SpeedUnit = 'knots' | 'kmh' | 'mps' | 'mph';

/** km/h per unit: every speed is stored in km/h. */
const KMH_PER: Record<SpeedUnit, number> = { knots: 1.852, kmh: 1, mps: 3.6, mph: 1.609344 };

/** A position in the request's fields, not yet checked (trackerPositionRequestSchema does that). */
export interface OsmandPosition {
  imei: unknown;
  gpsTime: unknown;
  latitude: unknown;
  longitude: unknown;
  speed?: number;
  ignition?: boolean;
  angle?: unknown;
  attributes?: Attributes;
}

/** Which protocol field each request field came from, so that a refusal names what the device sent. */
export type FieldNames = Record<string, string>;

export const QUERY_FIELDS: FieldNames = {
  imei: 'id',
  gpsTime: 'timestamp',
  latitude: 'lat',
  longitude: 'lon',
  speed: 'speed',
  angle: 'bearing',
  ignition: 'ignition',
  attributes: 'attributes',
};

export const JSON_FIELDS: FieldNames = {
  imei: 'device_id',
  gpsTime: 'location.timestamp',
  latitude: 'location.coords.latitude',
  longitude: 'location.coords.longitude',
  speed: 'location.coords.speed',
  angle: 'location.coords.heading',
  attributes: 'location.extras',
};

function missing(field: string, message = 'Required'): AppError {
  return new AppError({
    kind: 'validationFailed',
    detail: `${field}: ${message}`,
    body: { issues: [{ path: field, code: 'invalid_type', message }] },
  });
}

/** A number as the protocol writes one, in decimal only ("0x10" is no number); NaN when it is none. */
const numberOf = decimalNumber;

/** What a query value means as an attribute: a number, a boolean, or the text itself. */
function attributeValue(text: string): string | number | boolean {
  if (text === 'true' || text === 'false') return text === 'true';
  const number = numberOf(text);
  return Number.isFinite(number) ? number : text;
}

function booleanOf(text: string, field: string): boolean {
  if (/^(true|1)$/i.test(text)) return true;
  if (/^(false|0)$/i.test(text)) return false;
  throw missing(field, 'Expected true or false');
}

/**
 * The time as Traccar reads it: digits are Unix seconds below 2^31 and milliseconds above; any other
 * text, and digits past any date, are left to the request's parser (ISO 8601 with Z or an offset, or
 * `yyyy-MM-dd HH:mm:ss` as UTC), which refuses what it cannot read.
 */
function timeOf(text: string | undefined, receivedAt: string): unknown {
  if (text === undefined || text === '') return receivedAt;
  if (/^\d+$/.test(text)) {
    const value = Number(text);
    const time = new Date(value < 2 ** 31 ? value * 1000 : value);
    return Number.isNaN(time.getTime()) ? text : time.toISOString();
  }
  return text;
}

/** Fields the columns take; every other parameter is an attribute. */
const QUERY_COLUMNS = new Set(['id', 'deviceid', 'timestamp', 'lat', 'lon', 'location', 'speed', 'bearing', 'heading', 'ignition']);

/**
 * One position from the URL's (or a form's) parameters; a repeated parameter counts once, its first
 * value. Undefined for a report located only by the cell towers or Wi-Fi networks it saw, with no
 * coordinates: Traccar Client sends those when the phone has no fix. This service stores fixes only, and
 * refused, such a report would be sent again for ever, so it is acknowledged and counted as dropped.
 */
export function positionFromParameters(
  parameters: Record<string, string | string[] | undefined>,
  speedUnit: SpeedUnit,
  receivedAt: string,
): OsmandPosition | undefined {
  const value = (name: string): string | undefined => {
    const raw = parameters[name];
    return Array.isArray(raw) ? raw[0] : raw;
  };
  const imei = value('id') ?? value('deviceid');
  if (imei === undefined || imei === '') throw missing('id');

  let lat = value('lat');
  let lon = value('lon');
  const location = value('location');
  if ((lat === undefined || lon === undefined) && location !== undefined) [lat, lon] = location.split(',');
  const located = (text: string | undefined) => text !== undefined && text !== '';
  if (!located(lat) && !located(lon) && (located(value('cell')) || located(value('wifi')))) return undefined;
  if (lat === undefined || lat === '') throw missing('lat');
  if (lon === undefined || lon === '') throw missing('lon');
  const latitude = numberOf(lat);
  const longitude = numberOf(lon);
  if (Number.isNaN(latitude)) throw missing('lat', 'Expected a number');
  if (Number.isNaN(longitude)) throw missing('lon', 'Expected a number');

  const position: OsmandPosition = { imei, gpsTime: timeOf(value('timestamp'), receivedAt), latitude, longitude };
  const speed = value('speed');
  if (speed !== undefined && speed !== '') {
    const reported = numberOf(speed);
    if (Number.isNaN(reported)) throw missing('speed', 'Expected a number');
    position.speed = reported * KMH_PER[speedUnit];
  }
  const bearing = value('bearing') ?? value('heading');
  if (bearing !== undefined && bearing !== '') position.angle = numberOf(bearing);
  const ignition = value('ignition');
  if (ignition !== undefined && ignition !== '') position.ignition = booleanOf(ignition, 'ignition');

  const attributes: Attributes = {};
  for (const name of Object.keys(parameters)) {
    const text = value(name);
    if (!QUERY_COLUMNS.has(name) && text !== undefined) attributes[name] = attributeValue(text);
  }
  if (Object.keys(attributes).length > 0) position.attributes = attributes;
  return position;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A reported number, or undefined when it is absent or negative (Traccar Client's "unknown"). */
function known(value: unknown): number | undefined {
  return typeof value === 'number' && value >= 0 ? value : undefined;
}

/** One location of Traccar Client's JSON: `{location: {timestamp, coords, battery, ...}, device_id}`. */
export function positionFromJson(body: unknown, receivedAt: string): OsmandPosition {
  if (!isObject(body)) throw missing('body', 'Expected an object with location and device_id');
  const location = body.location;
  if (!isObject(location)) throw missing('location', 'Expected an object');
  const coords = location.coords;
  if (!isObject(coords)) throw missing('location.coords', 'Expected an object');
  if (body.device_id === undefined) throw missing('device_id');
  if (coords.latitude === undefined) throw missing('location.coords.latitude');
  if (coords.longitude === undefined) throw missing('location.coords.longitude');

  const position: OsmandPosition = {
    imei: typeof body.device_id === 'number' ? String(body.device_id) : body.device_id,
    gpsTime: location.timestamp ?? receivedAt,
    latitude: coords.latitude,
    longitude: coords.longitude,
  };
  const speed = known(coords.speed);
  if (speed !== undefined) position.speed = speed * KMH_PER.mps;
  const heading = known(coords.heading);
  if (heading !== undefined) position.angle = heading;

  const attributes: Attributes = {};
  const put = (name: string, value: unknown) => {
    if (value !== undefined && value !== null) attributes[name] = value as Attributes[string];
  };
  put('altitude', coords.altitude);
  put('accuracy', coords.accuracy);
  put('is_moving', location.is_moving);
  put('odometer', location.odometer);
  put('event', location.event);
  if (isObject(location.battery)) {
    const level = location.battery.level;
    // Traccar Client reports 0 to 1, and -1 when the phone does not say.
    if (typeof level === 'number' && level >= 0) put('batteryLevel', Math.round(level * 1000) / 10);
    put('charge', location.battery.is_charging);
  }
  if (isObject(location.activity)) put('activity', location.activity.type);
  if (isObject(location.extras)) for (const [name, value] of Object.entries(location.extras)) put(name, value);
  if (Object.keys(attributes).length > 0) position.attributes = attributes;
  return position;
}
