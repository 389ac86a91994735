import { firstMeeting, segmentsMeet, type Position } from './ring-crossings';

type Ring = Position[];

/** The definition the sweep must agree with: some two edges meet that are not neighbours in one ring. */
function everyPairMeeting(rings: readonly Ring[]): boolean {
  const edges = rings.flatMap((ring, r) =>
    ring.slice(1).map((to, index) => ({ r, index, from: ring[index]!, to, count: ring.length - 1 })),
  );
  return edges.some((a, i) =>
    edges.slice(i + 1).some((b) => {
      const apart = Math.abs(a.index - b.index);
      const neighbours = a.r === b.r && (apart === 1 || apart === a.count - 1);
      return !neighbours && segmentsMeet(a.from, a.to, b.from, b.to);
    }),
  );
}

/** A seeded generator (mulberry32), so that a disagreement is found again by its case number. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A closed ring of `size` positions drawn on a small grid, with no position repeated at once: a grid of
 * few points makes edges touch, overlap, fold back and stand upright far more often than chance would.
 */
function gridRing(next: () => number, size: number, grid: number, offset: Position = [0, 0]): Ring {
  const ring: Ring = [];
  while (ring.length < size) {
    const position: Position = [offset[0] + Math.floor(next() * grid), offset[1] + Math.floor(next() * grid)];
    const previous = ring.at(-1);
    if (!previous || previous[0] !== position[0] || previous[1] !== position[1]) ring.push(position);
  }
  if (ring[0]![0] === ring.at(-1)![0] && ring[0]![1] === ring.at(-1)![1]) ring.pop();
  return [...ring, ring[0]!];
}

/**
 * A ring of up to `size` positions of a grid, in order of their angle around a point off the grid: nearly
 * always a ring that meets itself nowhere, with many edges on the sweep line at once, and often upright or
 * in line with the next.
 */
function starRing(next: () => number, size: number, grid: number): Ring {
  const center = grid / 2 + 0.25;
  const positions = Array.from({ length: size }, (): Position => [Math.floor(next() * grid), Math.floor(next() * grid)]);
  const angle = ([x, y]: Position) => Math.atan2(y - center, x - center);
  const ring = positions
    .sort((a, b) => angle(a) - angle(b))
    .filter((position, index, sorted) => index === 0 || position[0] !== sorted[index - 1]![0] || position[1] !== sorted[index - 1]![1]);
  return [...ring, ring[0]!];
}

/** A ring of `count` positions winding out in a spiral and back beside itself: no edge meets another. */
function spiral(count: number): Ring {
  const arm = Array.from({ length: count / 2 }, (_, i) => i * 0.3);
  const outward = arm.map((angle): Position => [(1 + angle * 0.2) * Math.cos(angle), (1 + angle * 0.2) * Math.sin(angle)]);
  const back = arm.map((angle): Position => [(0.98 + angle * 0.2) * Math.cos(angle), (0.98 + angle * 0.2) * Math.sin(angle)]).reverse();
  return [...outward, ...back, outward[0]!];
}

describe('which rings of a polygon meet', () => {
  test('on one ring, the sweep agrees with comparing every pair of edges, on 60,000 rings drawn on small grids', () => {
    const next = random(46);
    const disagreements: string[] = [];
    let sound = 0;
    for (let n = 0; n < 60_000; n += 1) {
      const ring =
        n % 3 === 0
          ? starRing(next, 3 + Math.floor(next() * 60), 4 + Math.floor(next() * 16))
          : gridRing(next, 3 + Math.floor(next() * 10), 2 + Math.floor(next() * 5));
      if (ring.length < 4) continue;
      const expected = everyPairMeeting([ring]);
      if (!expected) sound += 1;
      if ((firstMeeting([ring]) !== undefined) !== expected) disagreements.push(JSON.stringify(ring));
    }
    expect(disagreements.slice(0, 5)).toEqual([]);
    expect(sound).toBeGreaterThan(15_000);
  });

  test('on several rings each sound, the sweep finds a meeting exactly when one exists, and names two rings that meet', () => {
    const next = random(4646);
    const disagreements: string[] = [];
    let meetings = 0;
    for (let n = 0; n < 20_000; n += 1) {
      const rings = Array.from({ length: 2 + Math.floor(next() * 3) }, () =>
        gridRing(next, 3 + Math.floor(next() * 5), 3 + Math.floor(next() * 3), [Math.floor(next() * 4), Math.floor(next() * 4)]),
      ).filter((ring) => ring.length >= 4 && !everyPairMeeting([ring]));
      if (rings.length < 2) continue;
      const found = firstMeeting(rings);
      const expected = everyPairMeeting(rings);
      if (found) meetings += 1;
      const named = found && found[0] !== found[1] && everyPairMeeting([rings[found[0]]!, rings[found[1]]!]);
      if ((found !== undefined) !== expected || (found && !named)) disagreements.push(JSON.stringify({ rings, found }));
    }
    expect(disagreements.slice(0, 5)).toEqual([]);
    expect(meetings).toBeGreaterThan(1_000);
  });

  test('a spiral of 1,000 positions, whose edges all lie within each other boxes, meets nowhere; one edge across it does', () => {
    const ring = spiral(998);
    expect(ring).toHaveLength(999);
    expect(firstMeeting([ring])).toBeUndefined();
    expect(everyPairMeeting([ring])).toBe(false);
    const crossed: Ring = [...ring.slice(0, 500), [0, 0], ...ring.slice(501)];
    expect(firstMeeting([crossed])).toEqual([0, 0]);
  });
});
