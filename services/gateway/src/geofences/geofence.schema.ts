// What a geofence is on the wire: a name, an area (a GeoJSON Polygon, or a circle as a center and a
// radius), and an optional speed limit inside it. A polygon must be one the events can be computed on:
// each ring closed (its last position its first), at least four positions, no ring crossing itself, at
// most MAX_GEOFENCE_VERTICES positions in all, every position a [longitude, latitude] on the globe.
import { z } from 'zod';
import { displayName } from '@fleet/shared/schemas/display-name';

export const GEOFENCE_NAME_MAX_LENGTH = 200;
export const MAX_GEOFENCE_VERTICES = 1000;
/** A circle larger than this (a fifth of the Earth's circumference) is not a geofence but a mistake. */
export const MAX_RADIUS_METERS = 8_000_000;

const longitude = z.number().min(-180).max(180);
const latitude = z.number().min(-90).max(90);
const position = z.tuple([longitude, latitude]);
type Position = z.output<typeof position>;

const samePosition = (a: Position, b: Position) => a[0] === b[0] && a[1] === b[1];

/** Whether segments p1-p2 and p3-p4 cross or touch (the orientation test). */
function segmentsMeet(p1: Position, p2: Position, p3: Position, p4: Position): boolean {
  const cross = (a: Position, b: Position, c: Position) => (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
  const onSegment = (a: Position, b: Position, c: Position) =>
    Math.min(a[0], b[0]) <= c[0] && c[0] <= Math.max(a[0], b[0]) && Math.min(a[1], b[1]) <= c[1] && c[1] <= Math.max(a[1], b[1]);
  const d1 = cross(p3, p4, p1);
  const d2 = cross(p3, p4, p2);
  const d3 = cross(p1, p2, p3);
  const d4 = cross(p1, p2, p4);
  if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))) return true;
  return (
    (d1 === 0 && onSegment(p3, p4, p1)) ||
    (d2 === 0 && onSegment(p3, p4, p2)) ||
    (d3 === 0 && onSegment(p1, p2, p3)) ||
    (d4 === 0 && onSegment(p1, p2, p4))
  );
}

/** Whether a closed ring crosses itself: any two of its edges that are not neighbours meet. */
export function selfIntersects(ring: readonly Position[]): boolean {
  const edges = ring.length - 1;
  for (let i = 0; i < edges; i += 1) {
    for (let j = i + 1; j < edges; j += 1) {
      const neighbours = j === i + 1 || (i === 0 && j === edges - 1);
      if (!neighbours && segmentsMeet(ring[i]!, ring[i + 1]!, ring[j]!, ring[j + 1]!)) return true;
    }
  }
  return false;
}

/**
 * The rings' checks, in order of cost: the size first, so that a body full of positions is refused
 * before any ring is walked (the crossing check compares every pair of edges).
 */
function checkRings(rings: Position[][], ctx: z.RefinementCtx): void {
  if (rings.length === 0) return void ctx.addIssue({ code: 'custom', message: 'A polygon needs its outer ring' });
  if (rings.reduce((sum, positions) => sum + positions.length, 0) > MAX_GEOFENCE_VERTICES) {
    return void ctx.addIssue({ code: 'custom', message: `A polygon may have at most ${MAX_GEOFENCE_VERTICES} positions` });
  }
  rings.forEach((positions, index) => {
    const problem =
      positions.length < 4
        ? 'A ring needs at least 4 positions'
        : !samePosition(positions[0]!, positions.at(-1)!)
          ? 'A ring must be closed: its last position its first'
          : selfIntersects(positions)
            ? 'A ring must not cross itself'
            : undefined;
    if (problem) ctx.addIssue({ code: 'custom', message: problem, path: [index] });
  });
}

export const polygonSchema = z.strictObject({
  type: z.literal('Polygon'),
  coordinates: z.array(z.array(position)).superRefine(checkRings),
});

export const circleSchema = z.strictObject({
  type: z.literal('Circle'),
  center: position,
  radiusMeters: z.number().positive().max(MAX_RADIUS_METERS),
});

export const geofenceRequestSchema = z.object({
  name: displayName(GEOFENCE_NAME_MAX_LENGTH),
  area: z.discriminatedUnion('type', [polygonSchema, circleSchema]),
  speedLimitKmh: z.number().positive().max(1000).optional(),
});

export type GeofenceArea = z.output<typeof geofenceRequestSchema>['area'];

export interface Geofence {
  id: number;
  name: string;
  area: GeofenceArea;
  /** null when the geofence has no speed limit of its own. */
  speedLimitKmh: number | null;
}

/** The positions of a polygon's rings, which every event processor holds in memory; a circle has none. */
export function positionsOf(area: GeofenceArea): number {
  return area.type === 'Polygon' ? area.coordinates.reduce((sum, ring) => sum + ring.length, 0) : 0;
}
