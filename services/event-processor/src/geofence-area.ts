// Whether a fix lies in a geofence's area, as the gateway stored it: a GeoJSON Polygon (its first ring
// the outline, any further rings holes; coordinates [longitude, latitude]) or a circle (center and
// radius in metres). Geofences are small next to the Earth, so a polygon is tested on the plane of its
// coordinates; a circle by the great-circle distance to its center.

import { insideRing, ringBounds, type Bounds } from '@fleet/shared/events/ring';

export type GeofenceArea =
  { type: 'Polygon'; coordinates: number[][][] } | { type: 'Circle'; center: [number, number]; radiusMeters: number };

const EARTH_RADIUS_M = 6_371_008.8;
const rad = (degrees: number) => (degrees * Math.PI) / 180;
const deg = (radians: number) => (radians * 180) / Math.PI;

/** The great-circle distance in metres between two [longitude, latitude] points (haversine). */
export function distanceMeters([lon1, lat1]: readonly number[], [lon2, lat2]: readonly number[]): number {
  const dLat = rad(lat2! - lat1!);
  const dLon = rad(lon2! - lon1!);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(lat1!)) * Math.cos(rad(lat2!)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

export function containsPoint(area: GeofenceArea, longitude: number, latitude: number): boolean {
  if (area.type === 'Circle') return distanceMeters(area.center, [longitude, latitude]) <= area.radiusMeters;
  const [outline, ...holes] = area.coordinates;
  if (!outline || !insideRing(outline, longitude, latitude)) return false;
  return !holes.some((hole) => insideRing(hole, longitude, latitude));
}

/**
 * Widens a box by about 0.1 m, so that rounding never leaves out a fix the area's own test holds: the
 * distance to a circle's center, or a ray's crossing of a polygon's edge, which at a vertex can land an
 * ulp beyond the vertex's coordinates.
 */
const MARGIN_DEGREES = 1e-6;

/**
 * The box of longitudes and latitudes an area lies in, in degrees: a fix outside it is outside the area,
 * found without the area's geometry. A fleet's geofences are many and each fix lies in few of them, so
 * most are ruled out by four comparisons rather than a polygon's every edge or a great-circle distance.
 */
export function boundsOf(area: GeofenceArea): Bounds {
  if (area.type === 'Polygon') {
    const [outline = []] = area.coordinates;
    const { west, south, east, north } = ringBounds(outline);
    return { west: west - MARGIN_DEGREES, south: south - MARGIN_DEGREES, east: east + MARGIN_DEGREES, north: north + MARGIN_DEGREES };
  }
  const [longitude, latitude] = area.center;
  const angle = area.radiusMeters / EARTH_RADIUS_M;
  const south = latitude - deg(angle) - MARGIN_DEGREES;
  const north = latitude + deg(angle) + MARGIN_DEGREES;
  // A circle holding a pole spans every longitude.
  if (south <= -90 || north >= 90) return { west: -180, south: Math.max(south, -90), east: 180, north: Math.min(north, 90) };
  // The widest a spherical cap reaches east and west of its center, at the latitude where its edge turns.
  const halfWidth = deg(Math.asin(Math.min(1, Math.sin(angle) / Math.cos(rad(latitude))))) + MARGIN_DEGREES;
  // One that crosses the antimeridian is given every longitude rather than two boxes: such circles are rare.
  if (longitude - halfWidth < -180 || longitude + halfWidth > 180) return { west: -180, south, east: 180, north };
  return { west: longitude - halfWidth, south, east: longitude + halfWidth, north };
}

export function inBounds(bounds: Bounds, longitude: number, latitude: number): boolean {
  return latitude >= bounds.south && latitude <= bounds.north && longitude >= bounds.west && longitude <= bounds.east;
}
