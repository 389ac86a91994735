import { ANTIMERIDIAN_PROBLEM, polygonSchema } from './geofence.schema';

type Ring = Array<[number, number]>;

/** A square ring of side `size` with its south-west corner at (x, y), counter-clockwise and closed. */
const square = (x: number, y: number, size: number): Ring => [
  [x, y],
  [x + size, y],
  [x + size, y + size],
  [x, y + size],
  [x, y],
];

/** The messages a polygon of these rings is refused with, each with the index of its ring; [] when it is taken. */
function refusals(...rings: Ring[]): Array<[string, unknown]> {
  const parsed = polygonSchema.safeParse({ type: 'Polygon', coordinates: rings });
  return parsed.success ? [] : parsed.error.issues.map((issue) => [issue.message, issue.path[1]]);
}

describe('a polygon ring', () => {
  test('a square is taken, and so is one with a position repeated at once', () => {
    expect(refusals(square(0, 0, 1))).toEqual([]);
    expect(
      refusals([
        [0, 0],
        [1, 0],
        [1, 0],
        [1, 1],
        [0, 1],
        [0, 0],
      ]),
    ).toEqual([]);
  });

  test('one crossing the antimeridian (170 to -170) is refused saying so, not read as the 340-degree band the other way', () => {
    const crossing: Ring = [
      [170, -10],
      [-170, -10],
      [-170, 10],
      [170, 10],
      [170, -10],
    ];
    expect(refusals(crossing)).toEqual([[ANTIMERIDIAN_PROBLEM, 0]]);
    // The same place each side of it is taken.
    expect(refusals(square(170, -10, 10))).toEqual([]);
    expect(refusals(square(-180, -10, 10))).toEqual([]);
  });

  test('positions all on one line enclose nothing', () => {
    const onALine: Ring = [
      [0, 0],
      [1, 1],
      [2, 2],
      [0, 0],
    ];
    const onePoint: Ring = [
      [5, 5],
      [5, 5],
      [5, 5],
      [5, 5],
    ];
    const message = 'A ring must enclose an area: its positions all lie on one line';
    expect(refusals(onALine)).toEqual([[message, 0]]);
    expect(refusals(onePoint)).toEqual([[message, 0]]);
  });

  test('a spike, an edge going back along the one before it, is the ring touching itself', () => {
    const spike: Ring = [
      [0, 0],
      [2, 0],
      [3, 0],
      [2, 0],
      [2, 2],
      [0, 2],
      [0, 0],
    ];
    const spikeAtTheStart: Ring = [
      [1, 0],
      [0, 0],
      [2, 0],
      [2, 2],
      [0, 2],
      [1, 0],
    ];
    expect(refusals(spike)).toEqual([['A ring must not cross itself', 0]]);
    expect(refusals(spikeAtTheStart)).toEqual([['A ring must not cross itself', 0]]);
  });
});

describe('a polygon hole', () => {
  test('a hole well inside the outer ring is taken, and so are two holes apart', () => {
    expect(refusals(square(0, 0, 10), square(2, 2, 2))).toEqual([]);
    expect(refusals(square(0, 0, 10), square(1, 1, 2), square(5, 5, 2))).toEqual([]);
  });

  test.each([
    ['outside the outer ring', square(20, 20, 2)],
    ['crossing the outer ring', square(8, 8, 4)],
    ['touching the outer ring at a corner', square(0, 0, 2)],
    ['around the whole outer ring', square(-5, -5, 20)],
  ])('a hole %s is refused, naming the hole', (_case, hole) => {
    expect(refusals(square(0, 0, 10), hole)).toEqual([['A hole must lie inside the outer ring, apart from it', 1]]);
  });

  test.each([
    ['overlapping', square(1, 1, 3), square(3, 3, 3)],
    ['one inside the other', square(1, 1, 6), square(2, 2, 2)],
    ['the other inside the one', square(2, 2, 2), square(1, 1, 6)],
  ])('two holes %s are refused, naming the later', (_case, first, second) => {
    expect(refusals(square(0, 0, 10), first, second)).toEqual([['A hole must lie apart from the other holes', 2]]);
  });

  test('a ring that is unsound on its own is named alone, without the holes being compared', () => {
    const open: Ring = square(2, 2, 2).slice(0, 4);
    expect(refusals(square(0, 0, 10), open, square(20, 20, 1))).toEqual([['A ring must be closed: its last position its first', 1]]);
  });
});
