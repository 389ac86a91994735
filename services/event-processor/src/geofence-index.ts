// Which geofences a fix lies in, at a cost bounded whatever shapes are stored. Each geofence is listed in
// the cells of a grid over the globe that its box meets, or, when its box spans more than WIDE_CELLS
// cells, once among the wide ones that every fix is tested against; so a fix is tested against the
// geofences near it and the wide ones, never against every small one; the wide circles are flat arrays. A polygon's rings are indexed
// (ring-index.ts), so a test costs the few edges near the fix; a circle is a dot product of unit vectors,
// the great-circle distance computed only within rounding of its edge.
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import { boundsOf, containsPoint, inBounds, type GeofenceArea } from './geofence-area';
import type { Geofence, Placement } from './device-rules';
import { indexRing } from './ring-index';

const CELL_DEGREES = 5;
const COLUMNS = 360 / CELL_DEGREES;
const ROWS = 180 / CELL_DEGREES;
/** A geofence whose box meets more cells than this is wide: tested for every fix rather than listed in each cell. */
const WIDE_CELLS = 64;
/** Work done between two turns of the event loop while indexing, so that health and metrics still answer. */
const SLICE_MS = 20;

const EARTH_RADIUS_M = 6_371_008.8;
const rad = (degrees: number) => (degrees * Math.PI) / 180;
/** How far a dot product may be from a circle's cosine before the haversine settles it. */
const DOT_ROUNDING = 1e-13;

type UnitVector = [number, number, number];
const unitVector = (longitude: number, latitude: number): UnitVector => {
  const cosLat = Math.cos(rad(latitude));
  return [cosLat * Math.cos(rad(longitude)), cosLat * Math.sin(rad(longitude)), Math.sin(rad(latitude))];
};

/** The test of whether a point is in the area, answering as `containsPoint` does. */
function areaTest(area: GeofenceArea): (longitude: number, latitude: number, point: UnitVector) => boolean {
  if (area.type === 'Circle') {
    const [cx, cy, cz] = unitVector(...area.center);
    const cosRadius = Math.cos(area.radiusMeters / EARTH_RADIUS_M);
    return (longitude, latitude, [x, y, z]) => {
      const dot = cx * x + cy * y + cz * z;
      if (Math.abs(dot - cosRadius) > DOT_ROUNDING) return dot > cosRadius;
      return containsPoint(area, longitude, latitude);
    };
  }
  const [outline, ...holes] = area.coordinates.map(indexRing);
  return (longitude, latitude) => {
    if (!outline?.contains(longitude, latitude)) return false;
    for (const hole of holes) if (hole.contains(longitude, latitude)) return false;
    return true;
  };
}

/** A geofence as the rules take it: its box and its area's test computed once, when it is first read. */
export function placedGeofence(fields: Pick<Geofence, 'id' | 'name' | 'area' | 'speedLimitKmh'>): Geofence {
  const test = areaTest(fields.area);
  const bounds = boundsOf(fields.area);
  return {
    ...fields,
    bounds,
    contains: (longitude, latitude, point = unitVector(longitude, latitude)) =>
      inBounds(bounds, longitude, latitude) && test(longitude, latitude, point),
  };
}

export interface GeofenceIndex {
  /** Every geofence by id: a fix leaving one names it. */
  byId: ReadonlyMap<number, Geofence>;
  /** The geofences the fix lies in, by id. */
  inside(longitude: number, latitude: number): Placement;
}

const column = (longitude: number) => Math.min(COLUMNS - 1, Math.max(0, Math.floor((longitude + 180) / CELL_DEGREES)));
const row = (latitude: number) => Math.min(ROWS - 1, Math.max(0, Math.floor((latitude + 90) / CELL_DEGREES)));

/** `a` and `b` merged: both ordinals in ascending order, so the answer is too. */
function merged(a: number[], b: number[]): number[] {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(a[i]! < b[j]! ? a[i++]! : b[j++]!);
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}

/**
 * The wide circles, as unit vectors and cosines in flat arrays: a fix is tested against every one, so
 * each costs a dot product read from contiguous memory rather than a call on an object of its own.
 */
class WideCircles {
  private readonly vectors: Float64Array;
  private readonly cosines: Float64Array;

  /** `ordinals`: each circle's place among every geofence, ascending. */
  constructor(
    private readonly fences: readonly Geofence[],
    private readonly ordinals: Int32Array,
  ) {
    this.vectors = new Float64Array(fences.length * 3);
    this.cosines = new Float64Array(fences.length);
    fences.forEach((fence, k) => {
      const area = fence.area as Extract<GeofenceArea, { type: 'Circle' }>;
      this.vectors.set(unitVector(...area.center), k * 3);
      this.cosines[k] = Math.cos(area.radiusMeters / EARTH_RADIUS_M);
    });
  }

  inside(longitude: number, latitude: number, [x, y, z]: UnitVector): number[] {
    const found: number[] = [];
    const { vectors, cosines } = this;
    for (let k = 0; k < cosines.length; k += 1) {
      const dot = vectors[k * 3]! * x + vectors[k * 3 + 1]! * y + vectors[k * 3 + 2]! * z;
      const cosine = cosines[k]!;
      // A circle's box holds all of it, so only its own test is made.
      if (Math.abs(dot - cosine) > DOT_ROUNDING ? dot > cosine : containsPoint(this.fences[k]!.area, longitude, latitude))
        found.push(this.ordinals[k]!);
    }
    return found;
  }
}

/**
 * The index of `geofences`, which must come in id order. A fix's answer is a list of ordinals (places in
 * that order) read into ids and limits from flat arrays: a geofence's own object is read only to test a
 * polygon or a small area, or to name one entered, since on this scale each object read is a cache miss.
 */
export function indexGeofences(geofences: readonly Geofence[]): GeofenceIndex {
  const ids = Float64Array.from(geofences, (fence) => fence.id);
  const limits = Float64Array.from(geofences, (fence) => fence.speedLimitKmh ?? NaN);
  const widePolygons: number[] = [];
  const wideCircles: number[] = [];
  const cells: number[][] = Array.from({ length: COLUMNS * ROWS }, () => []);
  geofences.forEach((fence, ordinal) => {
    const { west, south, east, north } = fence.bounds;
    const [c0, c1, r0, r1] = [column(west), column(east), row(south), row(north)];
    if ((c1 - c0 + 1) * (r1 - r0 + 1) > WIDE_CELLS) {
      (fence.area.type === 'Circle' ? wideCircles : widePolygons).push(ordinal);
      return;
    }
    for (let r = r0; r <= r1; r += 1) for (let c = c0; c <= c1; c += 1) cells[r * COLUMNS + c]!.push(ordinal);
  });
  const circles = new WideCircles(
    wideCircles.map((ordinal) => geofences[ordinal]!),
    Int32Array.from(wideCircles),
  );
  const tested = (ordinals: readonly number[], longitude: number, latitude: number, point: UnitVector) =>
    ordinals.filter((ordinal) => geofences[ordinal]!.contains(longitude, latitude, point));
  return {
    byId: new Map(geofences.map((fence) => [fence.id, fence])),
    inside(longitude, latitude) {
      const point = unitVector(longitude, latitude);
      const near = tested(cells[row(latitude) * COLUMNS + column(longitude)]!, longitude, latitude, point);
      const found = merged(merged(near, tested(widePolygons, longitude, latitude, point)), circles.inside(longitude, latitude, point));
      const placedIds = new Array<number>(found.length);
      let lowestLimitKmh = Infinity;
      for (let k = 0; k < found.length; k += 1) {
        placedIds[k] = ids[found[k]!]!;
        const limit = limits[found[k]!]!;
        // NaN, no limit, is never lower.
        if (limit < lowestLimitKmh) lowestLimitKmh = limit;
      }
      return {
        ids: placedIds,
        lowestLimitKmh: lowestLimitKmh === Infinity ? undefined : lowestLimitKmh,
        geofence: (k) => geofences[found[k]!]!,
      };
    },
  };
}

/**
 * `items` mapped by `work`, in slices of the event loop's time: the worst set of geofences the limits
 * allow takes milliseconds a fix, and seconds to place, and the processor's metrics must answer meanwhile.
 */
export async function mapInSlices<T, R>(items: readonly T[], work: (item: T) => R): Promise<R[]> {
  const results: R[] = [];
  let sliceStart = performance.now();
  for (const item of items) {
    results.push(work(item));
    if (performance.now() - sliceStart > SLICE_MS) {
      await yieldToEvents();
      sliceStart = performance.now();
    }
  }
  return results;
}
