// Whether a fix lies in a geofence's area, as the gateway stored it: a GeoJSON Polygon (its first ring
// the outline, any further rings holes; coordinates [longitude, latitude]) or a circle (center and
// radius in metres). Geofences are small next to the Earth, so a polygon is tested on the plane of its
// coordinates; a circle by the great-circle distance to its center.

export type GeofenceArea =
  { type: 'Polygon'; coordinates: number[][][] } | { type: 'Circle'; center: [number, number]; radiusMeters: number };

const EARTH_RADIUS_M = 6_371_008.8;
const rad = (degrees: number) => (degrees * Math.PI) / 180;

/** The great-circle distance in metres between two [longitude, latitude] points (haversine). */
export function distanceMeters([lon1, lat1]: readonly number[], [lon2, lat2]: readonly number[]): number {
  const dLat = rad(lat2! - lat1!);
  const dLon = rad(lon2! - lon1!);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(lat1!)) * Math.cos(rad(lat2!)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Even-odd ray casting: a point on the ring's inside crosses it an odd number of times. */
function inRing(ring: readonly number[][], lon: number, lat: number): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i]!;
    const [xj, yj] = ring[j]!;
    if (yi! > lat !== yj! > lat && lon < ((xj! - xi!) * (lat - yi!)) / (yj! - yi!) + xi!) inside = !inside;
  }
  return inside;
}

export function containsPoint(area: GeofenceArea, longitude: number, latitude: number): boolean {
  if (area.type === 'Circle') return distanceMeters(area.center, [longitude, latitude]) <= area.radiusMeters;
  const [outline, ...holes] = area.coordinates;
  if (!outline || !inRing(outline, longitude, latitude)) return false;
  return !holes.some((hole) => inRing(hole, longitude, latitude));
}
