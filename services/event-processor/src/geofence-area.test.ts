import fc from 'fast-check';
import { boundsOf, containsPoint, distanceMeters, inBounds } from './geofence-area';

describe('geofence areas', () => {
  const square = [
    [0, 0],
    [10, 0],
    [10, 10],
    [0, 10],
    [0, 0],
  ];
  const hole = [
    [4, 4],
    [6, 4],
    [6, 6],
    [4, 6],
    [4, 4],
  ];

  it('holds a point inside a polygon and not one outside it or in its hole', () => {
    const area = { type: 'Polygon' as const, coordinates: [square, hole] };
    expect(containsPoint(area, 2, 2)).toBe(true);
    expect(containsPoint(area, 11, 2)).toBe(false);
    expect(containsPoint(area, 5, 5)).toBe(false);
  });

  it('holds a point within the radius of a circle, by the distance on the ground', () => {
    const area = { type: 'Circle' as const, center: [13.4, 52.5] as [number, number], radiusMeters: 500 };
    expect(containsPoint(area, 13.4, 52.504)).toBe(true);
    expect(containsPoint(area, 13.4, 52.505)).toBe(false);
    expect(distanceMeters([0, 0], [0, 1])).toBeCloseTo(111_195, -1);
  });
});

describe("an area's bounds", () => {
  /** The point `meters` from `from` on the initial bearing `bearing` (radians), on the sphere. */
  function destination([lon, lat]: [number, number], bearing: number, meters: number): [number, number] {
    const angle = meters / 6_371_008.8;
    const φ1 = (lat * Math.PI) / 180;
    const φ2 = Math.asin(Math.sin(φ1) * Math.cos(angle) + Math.cos(φ1) * Math.sin(angle) * Math.cos(bearing));
    const λ2 =
      (lon * Math.PI) / 180 + Math.atan2(Math.sin(bearing) * Math.sin(angle) * Math.cos(φ1), Math.cos(angle) - Math.sin(φ1) * Math.sin(φ2));
    const wrapped = (((((λ2 * 180) / Math.PI + 540) % 360) + 360) % 360) - 180;
    return [wrapped, (φ2 * 180) / Math.PI];
  }

  const longitude = fc.double({ min: -180, max: 180, noNaN: true });
  const latitude = fc.double({ min: -90, max: 90, noNaN: true });
  const circle = fc.record({
    center: fc.tuple(longitude, latitude),
    radiusMeters: fc.oneof(fc.double({ min: 1, max: 10_000, noNaN: true }), fc.double({ min: 1, max: 8_000_000, noNaN: true })),
  });

  it('hold every point a circle holds: near its edge, across the antimeridian and around the poles', () => {
    fc.assert(
      fc.property(
        circle,
        fc.double({ min: 0, max: 2 * Math.PI, noNaN: true }),
        fc.double({ min: 0.9, max: 1.0001, noNaN: true }),
        (c, bearing, share) => {
          const area = { type: 'Circle' as const, center: c.center, radiusMeters: c.radiusMeters };
          const [lon, lat] = destination(c.center, bearing, c.radiusMeters * share);
          if (containsPoint(area, lon, lat)) expect(inBounds(boundsOf(area), lon, lat)).toBe(true);
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it('hold every point a polygon holds, and rule out most of the globe for a small one', () => {
    const polygon = fc
      .tuple(
        longitude,
        fc.double({ min: -80, max: 80, noNaN: true }),
        fc.array(fc.double({ min: 0.001, max: 0.5, noNaN: true }), { minLength: 3, maxLength: 40 }),
      )
      .map(([lon, lat, radii]) => {
        const ring = radii.map((r, k) => [
          Math.max(-180, Math.min(180, lon + r * Math.cos((2 * Math.PI * k) / radii.length))),
          lat + r * Math.sin((2 * Math.PI * k) / radii.length),
        ]);
        return { type: 'Polygon' as const, coordinates: [[...ring, ring[0]!]] };
      });
    fc.assert(
      fc.property(polygon, longitude, latitude, (area, lon, lat) => {
        const [x0, y0] = area.coordinates[0]![0]!;
        for (const [x, y] of [
          [lon, lat],
          [x0! + (lon / 180) * 0.5, y0! + (lat / 90) * 0.5],
        ] as const) {
          if (containsPoint(area, x, y)) expect(inBounds(boundsOf(area), x, y)).toBe(true);
        }
      }),
      { numRuns: 20_000 },
    );
    // Found by the property: the ray's crossing at the vertex rounds an ulp east of the vertex itself.
    const sliver = {
      type: 'Polygon' as const,
      coordinates: [
        [
          [0.001333928460305208, 0],
          [-0.006946192703503808, 0.01203115868163282],
          [-0.0005000000000000004, -0.0008660254037844385],
          [0.001333928460305208, 0],
        ],
      ],
    };
    expect(containsPoint(sliver, 0.0013339284603052083, 0)).toBe(true);
    expect(inBounds(boundsOf(sliver), 0.0013339284603052083, 0)).toBe(true);
    const small = { type: 'Circle' as const, center: [13.4, 52.5] as [number, number], radiusMeters: 500 };
    expect(boundsOf(small)).toEqual({
      west: expect.closeTo(13.3926, 3),
      south: expect.closeTo(52.4955, 3),
      east: expect.closeTo(13.4074, 3),
      north: expect.closeTo(52.5045, 3),
    });
  });
});
