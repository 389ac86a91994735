// What a geofence is on the wire: a name, an area (a GeoJSON Polygon, or a circle as a center and a
// radius), and an optional speed limit inside it. A polygon must be one the events can be computed on:
// each ring closed (its last position its first), enclosing an area, not crossing or touching itself,
// each hole inside the outer ring and apart from it and from the other holes, at most
// MAX_GEOFENCE_VERTICES positions in all, every position a [longitude, latitude] on the globe. A position
// repeated at once is allowed, as GeoJSON allows it, and left out of the checks.
import { z } from 'zod';
import { insideRing, ringBounds } from '@fleet/shared/events/ring';
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

/** Which side of the line a→b the point c is on: positive to the left, negative to the right, 0 on it. */
const side = (a: Position, b: Position, c: Position) => (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);

/** Whether segments p1-p2 and p3-p4 cross or touch (the orientation test). */
function segmentsMeet(p1: Position, p2: Position, p3: Position, p4: Position): boolean {
  const onSegment = (a: Position, b: Position, c: Position) =>
    Math.min(a[0], b[0]) <= c[0] && c[0] <= Math.max(a[0], b[0]) && Math.min(a[1], b[1]) <= c[1] && c[1] <= Math.max(a[1], b[1]);
  const d1 = side(p3, p4, p1);
  const d2 = side(p3, p4, p2);
  const d3 = side(p1, p2, p3);
  const d4 = side(p1, p2, p4);
  if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))) return true;
  return (
    (d1 === 0 && onSegment(p3, p4, p1)) ||
    (d2 === 0 && onSegment(p3, p4, p2)) ||
    (d3 === 0 && onSegment(p1, p2, p3)) ||
    (d4 === 0 && onSegment(p1, p2, p4))
  );
}

/**
 * Whether a closed ring without repeated positions crosses or touches itself: two edges that are not
 * neighbours meet. (Two neighbours folding back along each other make the next edge touch the first, or,
 * in a triangle, leave it no area, which ringProblem checks next.)
 */
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

/** Twice the ring's signed area (the shoelace formula): 0 when its positions all lie on one line. */
function doubledArea(ring: readonly Position[]): number {
  let sum = 0;
  for (let i = 0; i < ring.length - 1; i += 1) sum += ring[i]![0] * ring[i + 1]![1] - ring[i + 1]![0] * ring[i]![1];
  return sum;
}

/** Whether any edge of one ring meets any edge of the other. */
function ringsMeet(a: readonly Position[], b: readonly Position[]): boolean {
  for (let i = 0; i < a.length - 1; i += 1) {
    for (let j = 0; j < b.length - 1; j += 1) if (segmentsMeet(a[i]!, a[i + 1]!, b[j]!, b[j + 1]!)) return true;
  }
  return false;
}

/** The ring without positions repeated at once: a repeat is allowed, but it makes an edge of no length. */
const withoutRepeats = (ring: readonly Position[]) =>
  ring.filter((position, index) => index === 0 || !samePosition(position, ring[index - 1]!));

/** What is wrong with one ring on its own, if anything. */
function ringProblem(positions: readonly Position[]): string | undefined {
  if (positions.length < 4) return 'A ring needs at least 4 positions';
  if (!samePosition(positions[0]!, positions.at(-1)!)) return 'A ring must be closed: its last position its first';
  const ring = withoutRepeats(positions);
  const enclosesNothing = 'A ring must enclose an area: its positions all lie on one line';
  if (ring.length < 4) return enclosesNothing;
  if (selfIntersects(ring)) return 'A ring must not cross itself';
  // Only now: a ring crossing itself, a bow tie, may have lobes whose areas cancel out.
  if (doubledArea(ring) === 0) return enclosesNothing;
  return undefined;
}

/**
 * The rings' checks, in order of cost: the size first, so that a body full of positions is refused
 * before any ring is walked (the crossing checks compare every pair of edges); then each ring on its own;
 * then, only for rings each sound, the holes against the outer ring and against each other.
 */
function checkRings(rings: Position[][], ctx: z.RefinementCtx): void {
  if (rings.length === 0) return void ctx.addIssue({ code: 'custom', message: 'A polygon needs its outer ring' });
  if (rings.reduce((sum, positions) => sum + positions.length, 0) > MAX_GEOFENCE_VERTICES) {
    return void ctx.addIssue({ code: 'custom', message: `A polygon may have at most ${MAX_GEOFENCE_VERTICES} positions` });
  }
  const problems = rings.map(ringProblem);
  problems.forEach((message, index) => message && ctx.addIssue({ code: 'custom', message, path: [index] }));
  if (problems.some(Boolean)) return;
  const [outline, ...holes] = rings.map(withoutRepeats);
  // Two holes whose boxes do not meet are apart: most pairs are settled by four comparisons, rather than
  // by every pair of their edges (250 small holes took 15 ms without the boxes).
  const boxes = holes.map(ringBounds);
  const overlap = (one: number, other: number) => {
    const [a, b] = [boxes[one]!, boxes[other]!];
    if (a.west > b.east || b.west > a.east || a.south > b.north || b.south > a.north) return false;
    const [hole, another] = [holes[one]!, holes[other]!];
    return ringsMeet(hole, another) || insideRing(another, ...hole[0]!) || insideRing(hole, ...another[0]!);
  };
  holes.forEach((hole, index) => {
    const problem =
      ringsMeet(hole, outline!) || !insideRing(outline!, ...hole[0]!)
        ? 'A hole must lie inside the outer ring, apart from it'
        : holes.some((_other, o) => o < index && overlap(index, o))
          ? 'A hole must lie apart from the other holes'
          : undefined;
    if (problem) ctx.addIssue({ code: 'custom', message: problem, path: [index + 1] });
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
