// What a geofence is on the wire: a name, an area (a GeoJSON Polygon, or a circle as a center and a
// radius), and an optional speed limit inside it. A polygon must be one the events can be computed on:
// each ring closed (its last position its first), enclosing an area, not crossing or touching itself,
// each hole inside the outer ring and apart from it and from the other holes, at most
// MAX_GEOFENCE_VERTICES positions in all, every position a [longitude, latitude] on the globe. A position
// repeated at once is allowed, as GeoJSON allows it, and left out of the checks.
import { z } from 'zod';
import { insideRing, ringBounds } from '@fleet/shared/events/ring';
import { displayName } from '@fleet/shared/schemas/display-name';
import { firstMeeting } from './ring-crossings';

export const GEOFENCE_NAME_MAX_LENGTH = 200;
export const MAX_GEOFENCE_VERTICES = 1000;
/** A circle larger than this (a fifth of the Earth's circumference) is not a geofence but a mistake. */
export const MAX_RADIUS_METERS = 8_000_000;

const longitude = z.number().min(-180).max(180);
const latitude = z.number().min(-90).max(90);
const position = z.tuple([longitude, latitude]);
type Position = z.output<typeof position>;

const samePosition = (a: Position, b: Position) => a[0] === b[0] && a[1] === b[1];

/** Twice the ring's signed area (the shoelace formula): 0 when its positions all lie on one line. */
function doubledArea(ring: readonly Position[]): number {
  let sum = 0;
  for (let i = 0; i < ring.length - 1; i += 1) sum += ring[i]![0] * ring[i + 1]![1] - ring[i + 1]![0] * ring[i]![1];
  return sum;
}

/** The ring without positions repeated at once: a repeat is allowed, but it makes an edge of no length. */
const withoutRepeats = (ring: readonly Position[]) =>
  ring.filter((position, index) => index === 0 || !samePosition(position, ring[index - 1]!));

/**
 * Events are computed on the plane of the coordinates, where an edge from 170 to -170 runs 340 degrees
 * west, not 20 east: a polygon crossing the antimeridian would be read as the band the other way round.
 */
export const ANTIMERIDIAN_PROBLEM =
  'An edge must not span more than 180 degrees of longitude: a polygon crossing the antimeridian is not supported; split it into one each side';

/** What is wrong with one ring on its own, if anything: `ring` is `positions` without their repeats. */
function ringProblem(positions: readonly Position[], ring: readonly Position[]): string | undefined {
  if (positions.length < 4) return 'A ring needs at least 4 positions';
  if (!samePosition(positions[0]!, positions.at(-1)!)) return 'A ring must be closed: its last position its first';
  if (ring.some((position, i) => i > 0 && Math.abs(position[0] - ring[i - 1]![0]) > 180)) return ANTIMERIDIAN_PROBLEM;
  const enclosesNothing = 'A ring must enclose an area: its positions all lie on one line';
  if (ring.length < 4) return enclosesNothing;
  // Crossing or touching itself: two edges that are not neighbours meet. (Two neighbours folding back
  // along each other make the next edge touch the first, or, in a triangle, leave it no area.)
  if (firstMeeting([ring])) return 'A ring must not cross itself';
  // Only now: a ring crossing itself, a bow tie, may have lobes whose areas cancel out.
  if (doubledArea(ring) === 0) return enclosesNothing;
  return undefined;
}

const OUTSIDE = 'A hole must lie inside the outer ring, apart from it';
const APART = 'A hole must lie apart from the other holes';

/**
 * The rings' checks, in order of cost: the size first, so that a body full of positions is refused
 * before any ring is walked; then each ring on its own; then, only for rings each sound, the holes
 * against the outer ring and against each other.
 */
function checkRings(rings: Position[][], ctx: z.RefinementCtx): void {
  if (rings.length === 0) return void ctx.addIssue({ code: 'custom', message: 'A polygon needs its outer ring' });
  if (rings.reduce((sum, positions) => sum + positions.length, 0) > MAX_GEOFENCE_VERTICES) {
    return void ctx.addIssue({ code: 'custom', message: `A polygon may have at most ${MAX_GEOFENCE_VERTICES} positions` });
  }
  const unrepeated = rings.map(withoutRepeats);
  const problems = rings.map((positions, index) => ringProblem(positions, unrepeated[index]!));
  problems.forEach((message, index) => message && ctx.addIssue({ code: 'custom', message, path: [index] }));
  if (problems.some(Boolean)) return;
  // A hole that meets the outer ring or another hole: the first such meeting found is named, on the later
  // of its two rings.
  const meeting = firstMeeting(unrepeated);
  if (meeting) {
    const [first, later] = meeting;
    const message = first === 0 ? OUTSIDE : APART;
    return void ctx.addIssue({ code: 'custom', message, path: [later] });
  }
  // No edges meet, so a hole is either wholly inside another ring or wholly outside it. Two holes whose
  // boxes do not meet are apart: most pairs are settled by four comparisons.
  const [outline, ...holes] = unrepeated;
  const boxes = holes.map(ringBounds);
  const nested = (one: number, other: number) => {
    const [a, b] = [boxes[one]!, boxes[other]!];
    if (a.west > b.east || b.west > a.east || a.south > b.north || b.south > a.north) return false;
    return insideRing(holes[other]!, ...holes[one]![0]!) || insideRing(holes[one]!, ...holes[other]![0]!);
  };
  holes.forEach((hole, index) => {
    const problem = !insideRing(outline!, ...hole[0]!)
      ? OUTSIDE
      : holes.some((_other, o) => o < index && nested(index, o))
        ? APART
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
