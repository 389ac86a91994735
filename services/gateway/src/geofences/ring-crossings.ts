// Whether a polygon's rings cross or touch, found by a sweep over their edges (Shamos and Hoey): the edges
// are met in order of longitude, and only edges next to each other on the sweep line are compared.
// Comparing every pair of edges instead took 3 to 7 ms of the gateway's only thread, once warm, for a
// crafted ring of 1,000 positions (a spiral, or a comb whose long edges all overlap in longitude), and up
// to 19 ms on a slower host; the sweep takes 0.5 to 0.7 ms. The coordinates are compared as planar
// [longitude, latitude], the plane the geofences are checked on.

export type Position = readonly [number, number];

/** Which side of the line a→b the point c is on: positive to the left, negative to the right, 0 on it. */
const side = (a: Position, b: Position, c: Position) => (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);

/** Whether segments p1-p2 and p3-p4 cross or touch (the orientation test). */
export function segmentsMeet(p1: Position, p2: Position, p3: Position, p4: Position): boolean {
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

interface Edge {
  ring: number;
  index: number;
  /** The end met first by the sweep (the lower longitude, then the lower latitude), and the other. */
  left: Position;
  right: Position;
}

/** The sweep's order of positions: by longitude, then by latitude. */
const order = (a: Position, b: Position) => a[0] - b[0] || a[1] - b[1];

const samePosition = (a: Position, b: Position) => a[0] === b[0] && a[1] === b[1];

/**
 * The rings' edges, each ring closed (its last position its first) with no position repeated at once.
 * Two edges next to each other in a ring share a position, which is not a meeting.
 */
class RingEdges {
  readonly edges: Edge[] = [];
  private readonly counts: number[];

  constructor(rings: readonly (readonly Position[])[]) {
    this.counts = rings.map((ring) => ring.length - 1);
    rings.forEach((ring, r) => {
      for (let index = 0; index < ring.length - 1; index += 1) {
        const [a, b] = [ring[index]!, ring[index + 1]!];
        this.edges.push(order(a, b) <= 0 ? { ring: r, index, left: a, right: b } : { ring: r, index, left: b, right: a });
      }
    });
  }

  neighbours(a: Edge, b: Edge): boolean {
    if (a.ring !== b.ring) return false;
    const apart = Math.abs(a.index - b.index);
    return apart === 1 || apart === this.counts[a.ring]! - 1;
  }

  /** Whether two edges that are not neighbours meet. */
  meet(a: Edge | undefined, b: Edge | undefined): boolean {
    return a !== undefined && b !== undefined && !this.neighbours(a, b) && segmentsMeet(a.left, a.right, b.left, b.right);
  }

  /**
   * Every pair of edges compared: the answer when rounding has broken the sweep's order, which only
   * positions crafted to lie almost on one line can do; as slow as the sweep is meant to avoid, no slower.
   */
  everyPair(): [Edge, Edge] | undefined {
    for (let i = 0; i < this.edges.length; i += 1) {
      for (let j = i + 1; j < this.edges.length; j += 1)
        if (this.meet(this.edges[i], this.edges[j])) return [this.edges[i]!, this.edges[j]!];
    }
    return undefined;
  }
}

/**
 * The sweep itself. At each position where an edge starts or ends, the edges on the sweep line that pass
 * through it are found by a binary search; all of these and the edges starting there meet at it. Then the
 * edges ending there leave the line, those starting there join it, and each edge is compared with its
 * new neighbours on the line. A meeting is found no later than the sweep reaches its leftmost point.
 */
function sweep(all: RingEdges): [Edge, Edge] | undefined {
  const starts = [...all.edges].sort((a, b) => order(a.left, b.left));
  const ends = [...all.edges].sort((a, b) => order(a.right, b.right));
  /** The edges on the sweep line, from south to north. */
  const line: Edge[] = [];
  let [nextStart, nextEnd] = [0, 0];
  while (nextEnd < ends.length) {
    const end = ends[nextEnd]!.right;
    const at = nextStart < starts.length && order(starts[nextStart]!.left, end) <= 0 ? starts[nextStart]!.left : end;
    const starting: Edge[] = [];
    while (nextStart < starts.length && samePosition(starts[nextStart]!.left, at)) starting.push(starts[nextStart++]!);
    let ending = 0;
    for (; nextEnd < ends.length && samePosition(ends[nextEnd]!.right, at); nextEnd += 1) ending += 1;
    // South to north: the edges passing south of the position, those through it, those north of it.
    const south = firstIndex(line, 0, (edge) => side(edge.left, edge.right, at) <= 0);
    const north = firstIndex(line, south, (edge) => side(edge.left, edge.right, at) < 0);
    const through = line.slice(south, north);
    // Every edge ending here is on the line through the position, unless rounding has broken its order.
    if (through.filter((edge) => samePosition(edge.right, at)).length !== ending) return all.everyPair();
    const meeting = [...through, ...starting];
    for (let i = 0; i < meeting.length; i += 1) {
      for (let j = i + 1; j < meeting.length; j += 1) if (!all.neighbours(meeting[i]!, meeting[j]!)) return [meeting[i]!, meeting[j]!];
    }
    // What goes on past the position, south to north by the direction it leaves in.
    const onward = meeting.filter((edge) => !samePosition(edge.right, at)).sort((a, b) => -side(at, a.right, b.right));
    line.splice(south, through.length, ...onward);
    const last = south + onward.length;
    if (all.meet(line[south - 1], line[south])) return [line[south - 1]!, line[south]!];
    if (onward.length > 0 && all.meet(line[last - 1], line[last])) return [line[last - 1]!, line[last]!];
  }
  return undefined;
}

/** The first index from `from` whose edge satisfies a test that holds for every edge after it too. */
function firstIndex(line: readonly Edge[], from: number, test: (edge: Edge) => boolean): number {
  let [low, high] = [from, line.length];
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (test(line[middle]!)) high = middle;
    else low = middle + 1;
  }
  return low;
}

/**
 * Two rings that meet, or a ring that meets itself, as their indexes (the lower first); undefined when no
 * two edges meet but neighbours in a ring at the position they share. Each ring must be closed, with no
 * position repeated at once.
 */
export function firstMeeting(rings: readonly (readonly Position[])[]): [number, number] | undefined {
  const all = new RingEdges(rings);
  const pair = sweep(all);
  if (pair === undefined) return undefined;
  const [a, b] = pair;
  return a.ring <= b.ring ? [a.ring, b.ring] : [b.ring, a.ring];
}
