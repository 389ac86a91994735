// A polygon ring's edges in a quadtree, so that placing a fix costs the few edges near it rather than
// every edge of the ring. Each cell keeps a reference point and whether it is inside the ring; a fix is
// inside when the segment from its cell's reference point to it crosses the ring an even number of times
// and the reference point is inside, or an odd number and it is not. That segment lies within the cell,
// so only the cell's own edges can cross it. A ring of any shape, a comb's teeth included, costs a fix
// at most MAX_LEAF_EDGES edges wherever the ring's detail is coarser than a cell at MAX_DEPTH.
import { insideRing, type Bounds } from '@fleet/shared/events/ring';

/** A cell holding more edges than this is split in four. */
const MAX_LEAF_EDGES = 32;
/**
 * Splits at most this deep: a cell of a ring spanning the globe is then some 600 m across. Finer detail
 * than that costs the fixes in that cell its edges, and no other fix anything.
 */
const MAX_DEPTH = 16;

/**
 * A point nearer an edge than this, in degrees (some 0.1 mm), is taken to be on the boundary, where the
 * plain ray cast decides: there the sign of an orientation is rounding's, and the two methods could part.
 */
const ON_EDGE_DEGREES = 1e-9;

interface Cell {
  west: number;
  south: number;
  east: number;
  north: number;
  /** The reference point: the cell's center, or a point near it where the center lies on an edge. */
  x: number;
  y: number;
  inside: boolean;
  /** The edges meeting the cell, by the index of their first position; empty once split. */
  edges: Int32Array;
  /** South-west, south-east, north-west, north-east, split at the cell's center. */
  children: [Cell, Cell, Cell, Cell] | undefined;
}

const orient = (ax: number, ay: number, bx: number, by: number, cx: number, cy: number) => (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);

/** What the segment from a reference point to a fix does with one edge. */
const enum Crossing {
  None,
  Once,
  /** The fix lies on the edge, or within ON_EDGE_DEGREES of it: the plain ray cast decides. */
  OnEdge,
}

/**
 * The quadtree as it is queried, in flat arrays, a cell's children next to each other: a fix tested
 * against a thousand rings reads a few cache lines of each, where a tree of objects costs a miss a level.
 */
interface FlatTree {
  /** Per cell: its center (where it splits) and its reference point: x, y, refX, refY. */
  points: Float64Array;
  /** Per cell: its first child's index (-1 for a leaf), then where its edges start in `edges` and how many. */
  links: Int32Array;
  inside: Uint8Array;
  edges: Int32Array;
}

export class RingIndex {
  private readonly xs: Float64Array;
  private readonly ys: Float64Array;
  private readonly box: Bounds;
  private readonly flat: FlatTree;

  constructor(private readonly ring: readonly (readonly number[])[]) {
    this.xs = Float64Array.from(ring, (position) => position[0]!);
    this.ys = Float64Array.from(ring, (position) => position[1]!);
    const count = ring.length - 1;
    let [west, south, east, north] = [Infinity, Infinity, -Infinity, -Infinity];
    for (let i = 0; i < count; i += 1) {
      west = Math.min(west, this.xs[i]!);
      east = Math.max(east, this.xs[i]!);
      south = Math.min(south, this.ys[i]!);
      north = Math.max(north, this.ys[i]!);
    }
    const root = this.cell(
      west,
      south,
      east,
      north,
      Int32Array.from({ length: count }, (_, i) => i),
      undefined,
    );
    this.split(root, 0);
    this.box = { west, south, east, north };
    this.flat = flatten(root);
  }

  /** Whether the point is inside the ring, as `insideRing` answers it. */
  contains(longitude: number, latitude: number): boolean {
    const { west, south, east, north } = this.box;
    // Beyond the ring's box only by the rounding of a ray's crossing at a vertex: the plain cast decides.
    if (!(longitude >= west && longitude <= east && latitude >= south && latitude <= north)) {
      return insideRing(this.ring, longitude, latitude);
    }
    const { points, links, inside, edges } = this.flat;
    let at = 0;
    while (links[at * 3]! !== -1) {
      at = links[at * 3]! + (longitude >= points[at * 4]! ? 1 : 0) + (latitude >= points[at * 4 + 1]! ? 2 : 0);
    }
    const [start, end] = [links[at * 3 + 1]!, links[at * 3 + 1]! + links[at * 3 + 2]!];
    const [refX, refY] = [points[at * 4 + 2]!, points[at * 4 + 3]!];
    let held = inside[at] === 1;
    const { xs, ys } = this;
    for (let k = start; k < end; k += 1) {
      const edge = edges[k]!;
      // At a vertex no edge straddles the segment, so a fix there is found by its nearness (each vertex in
      // the cell starts an edge meeting it); one inside an edge makes that edge straddle the segment, and
      // the crossing finds it.
      if (Math.abs(longitude - xs[edge]!) <= ON_EDGE_DEGREES && Math.abs(latitude - ys[edge]!) <= ON_EDGE_DEGREES) {
        return insideRing(this.ring, longitude, latitude);
      }
      const crossed = this.crossing(edge, refX, refY, longitude, latitude);
      if (crossed === Crossing.OnEdge) return insideRing(this.ring, longitude, latitude);
      if (crossed === Crossing.Once) held = !held;
    }
    return held;
  }

  // The segment (ax, ay) -> (bx, by) against edge i. A vertex on the segment's line counts as lying on
  // its right: the same half-open rule as the ray cast's, so the crossings of any segment between two
  // points off the ring tell whether they are on the same side of it.
  private crossing(i: number, ax: number, ay: number, bx: number, by: number): Crossing {
    const ux = this.xs[i]!;
    const uy = this.ys[i]!;
    const vx = this.xs[i + 1]!;
    const vy = this.ys[i + 1]!;
    if (orient(ax, ay, bx, by, ux, uy) > 0 === orient(ax, ay, bx, by, vx, vy) > 0) return Crossing.None;
    const atStart = orient(ux, uy, vx, vy, ax, ay);
    const atEnd = orient(ux, uy, vx, vy, bx, by);
    // The edge straddles the segment's line, so a fix on the edge's line is where the two lines meet: on the edge.
    if (Math.abs(atEnd) <= ON_EDGE_DEGREES * Math.max(Math.abs(vx - ux), Math.abs(vy - uy))) return Crossing.OnEdge;
    return atStart > 0 !== atEnd > 0 ? Crossing.Once : Crossing.None;
  }

  /** Whether (x, y) lies within ON_EDGE_DEGREES of edge i, by its distance to the edge's line within its box. */
  private nearEdge(i: number, x: number, y: number): boolean {
    const ux = this.xs[i]!;
    const uy = this.ys[i]!;
    const vx = this.xs[i + 1]!;
    const vy = this.ys[i + 1]!;
    const d = ON_EDGE_DEGREES;
    if (x < Math.min(ux, vx) - d || x > Math.max(ux, vx) + d || y < Math.min(uy, vy) - d || y > Math.max(uy, vy) + d) return false;
    return Math.abs(orient(ux, uy, vx, vy, x, y)) <= d * Math.hypot(vx - ux, vy - uy);
  }

  private onAnEdge(edges: Int32Array, x: number, y: number): boolean {
    for (let k = 0; k < edges.length; k += 1) if (this.nearEdge(edges[k]!, x, y)) return true;
    return false;
  }

  private meetsBox(i: number, west: number, south: number, east: number, north: number): boolean {
    const ux = this.xs[i]!;
    const uy = this.ys[i]!;
    const vx = this.xs[i + 1]!;
    const vy = this.ys[i + 1]!;
    if (Math.max(ux, vx) < west || Math.min(ux, vx) > east || Math.max(uy, vy) < south || Math.min(uy, vy) > north) return false;
    // Within the box's span, the edge misses it only if every corner is strictly on one side of its line.
    const sides = [
      orient(ux, uy, vx, vy, west, south),
      orient(ux, uy, vx, vy, east, south),
      orient(ux, uy, vx, vy, west, north),
      orient(ux, uy, vx, vy, east, north),
    ];
    return !(sides.every((side) => side > 0) || sides.every((side) => side < 0));
  }

  /** Whether (x, y) is inside, walked to from `from`'s reference point across `edges`: every edge the segment can meet. */
  private walk(from: Cell, x: number, y: number, edges: Int32Array): boolean {
    let inside = from.inside;
    for (let k = 0; k < edges.length; k += 1) {
      const crossed = this.crossing(edges[k]!, from.x, from.y, x, y);
      if (crossed === Crossing.OnEdge) return insideRing(this.ring, x, y);
      if (crossed === Crossing.Once) inside = !inside;
    }
    return inside;
  }

  /** A cell with its reference point: its center, or, where that lies on an edge, a point moved off it. */
  private cell(west: number, south: number, east: number, north: number, edges: Int32Array, parent: Cell | undefined): Cell {
    let x = (west + east) / 2;
    let y = (south + north) / 2;
    for (let nudge = 1; nudge < 8 && this.onAnEdge(edges, x, y); nudge += 1) {
      x = west + (east - west) * (0.5 + nudge * 0.0617);
      y = south + (north - south) * (0.5 - nudge * 0.0431);
    }
    // The segment between the parent's reference point and the child's lies in the parent, so the
    // parent's edges are all it can meet.
    const inside = parent ? this.walk(parent, x, y, parent.edges) : insideRing(this.ring, x, y);
    return { west, south, east, north, x, y, inside, edges, children: undefined };
  }

  private split(cell: Cell, depth: number): void {
    if (cell.edges.length <= MAX_LEAF_EDGES || depth >= MAX_DEPTH) return;
    const midX = (cell.west + cell.east) / 2;
    const midY = (cell.south + cell.north) / 2;
    const boxes: [number, number, number, number][] = [
      [cell.west, cell.south, midX, midY],
      [midX, cell.south, cell.east, midY],
      [cell.west, midY, midX, cell.north],
      [midX, midY, cell.east, cell.north],
    ];
    const children = boxes.map(([w, s, e, n]) =>
      this.cell(
        w,
        s,
        e,
        n,
        cell.edges.filter((i) => this.meetsBox(i, w, s, e, n)),
        cell,
      ),
    );
    cell.children = children as [Cell, Cell, Cell, Cell];
    cell.edges = new Int32Array(0);
    for (const child of children) this.split(child, depth + 1);
  }
}

/** The tree in flat arrays, breadth first, so that a cell's four children are next to each other. */
function flatten(root: Cell): FlatTree {
  const order: Cell[] = [root];
  const firstChild: number[] = [];
  for (let k = 0; k < order.length; k += 1) {
    const children = order[k]!.children;
    firstChild.push(children ? order.length : -1);
    if (children) order.push(...children);
  }
  const points = new Float64Array(order.length * 4);
  const links = new Int32Array(order.length * 3);
  const inside = new Uint8Array(order.length);
  const edges = new Int32Array(order.reduce((sum, cell) => sum + cell.edges.length, 0));
  let edgeAt = 0;
  order.forEach((cell, k) => {
    points.set([(cell.west + cell.east) / 2, (cell.south + cell.north) / 2, cell.x, cell.y], k * 4);
    links.set([firstChild[k]!, edgeAt, cell.edges.length], k * 3);
    inside[k] = cell.inside ? 1 : 0;
    edges.set(cell.edges, edgeAt);
    edgeAt += cell.edges.length;
  });
  return { points, links, inside, edges };
}

export const indexRing = (ring: readonly (readonly number[])[]): RingIndex => new RingIndex(ring);
