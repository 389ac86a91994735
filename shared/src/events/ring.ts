// Whether a point is inside a polygon's ring, one rule for the gateway that checks a geofence's holes
// and the event processors that place fixes in geofences.

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
