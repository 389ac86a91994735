// The costliest geofence set the gateway's limits allow (GEOFENCES_MAX geofences, GEOFENCES_MAX_POSITIONS
// polygon positions, each polygon at most MAX_GEOFENCE_VERTICES): every box spans the globe, so no fix
// is ruled out by a box. Half the polygon positions frame the globe, half are a hole shaped as a comb
// whose notches run from south to north, so every latitude meets most of its edges.
import { MAX_GEOFENCE_VERTICES, MAX_RADIUS_METERS } from '@fleet/gateway/geofences/geofence.schema';

export const WORST_SET_POLYGONS = 500;
export const WORST_SET_CIRCLES = 9500;

/** A closed ring framing the box with `count` positions along its edges, counter-clockwise. */
function frame(count: number, west: number, south: number, east: number, north: number): number[][] {
  const side = Math.floor((count - 1) / 4);
  const along = (from: number[], to: number[]) =>
    Array.from({ length: side }, (_, k) => [from[0]! + ((to[0]! - from[0]!) * k) / side, from[1]! + ((to[1]! - from[1]!) * k) / side]);
  const corners = [
    [west, south],
    [east, south],
    [east, north],
    [west, north],
  ];
  const ring = corners.flatMap((corner, i) => along(corner, corners[(i + 1) % 4]!));
  return [...ring, ring[0]!];
}

/**
 * A closed ring of `count` positions or fewer: the box with notches cut from its south edge nearly to its
 * north one, so that a line along any latitude but the northmost meets two edges a notch.
 */
export function combRing(count: number, west: number, south: number, east: number, north: number): number[][] {
  const notches = Math.floor((count - 6) / 4);
  const width = (east - west) / notches;
  const top = north - (north - south) * 0.01;
  const ring: number[][] = [[west, south]];
  for (let n = 0; n < notches; n += 1) {
    const [a, b] = [west + (n + 0.25) * width, west + (n + 0.75) * width];
    ring.push([a, south], [a, top], [b, top], [b, south]);
  }
  // The north edge in two, so that no edge spans more than 180 degrees of longitude (geofence.schema.ts).
  ring.push([east, south], [east, north], [(east + west) / 2, north], [west, north], [west, south]);
  return ring;
}

export interface GeofenceBody {
  name: string;
  area: { type: 'Polygon'; coordinates: number[][][] } | { type: 'Circle'; center: [number, number]; radiusMeters: number };
}

/** The worst set, the same every time: `random` is a seeded generator's. */
export function worstGeofenceSet(random: () => number): GeofenceBody[] {
  const half = MAX_GEOFENCE_VERTICES / 2;
  const polygons: GeofenceBody[] = Array.from({ length: WORST_SET_POLYGONS }, (_, i) => ({
    name: `worst-frame-${i}`,
    area: { type: 'Polygon', coordinates: [frame(half, -180, -90, 180, 90), combRing(half, -170, -80, 170, 80).reverse()] },
  }));
  const circles: GeofenceBody[] = Array.from({ length: WORST_SET_CIRCLES }, (_, i) => ({
    name: `worst-circle-${i}`,
    area: { type: 'Circle', center: [random() * 360 - 180, random() * 180 - 90], radiusMeters: MAX_RADIUS_METERS },
  }));
  return [...polygons, ...circles];
}

/** A small seeded generator (mulberry32), so that the bench and the tests build the same set. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
