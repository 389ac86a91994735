// Whether a point is inside a polygon's ring, and the box a ring lies in: one rule for the gateway that
// checks a geofence's holes and the event processors that place fixes in geofences.

/** A box of longitudes and latitudes, in degrees. */
export interface Bounds {
  west: number;
  south: number;
  east: number;
  north: number;
}

/** The smallest box of longitudes and latitudes holding every position of the ring. */
export function ringBounds(ring: readonly (readonly number[])[]): Bounds {
  const longitudes = ring.map((position) => position[0]!);
  const latitudes = ring.map((position) => position[1]!);
  return { west: Math.min(...longitudes), south: Math.min(...latitudes), east: Math.max(...longitudes), north: Math.max(...latitudes) };
}

/**
 * Even-odd ray casting on the plane of the coordinates ([longitude, latitude]): a point inside the ring
 * crosses it an odd number of times on its way out.
 */
export function insideRing(ring: readonly (readonly number[])[], longitude: number, latitude: number): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i]!;
    const [xj, yj] = ring[j]!;
    if (yi! > latitude !== yj! > latitude && longitude < ((xj! - xi!) * (latitude - yi!)) / (yj! - yi!) + xi!) inside = !inside;
  }
  return inside;
}
