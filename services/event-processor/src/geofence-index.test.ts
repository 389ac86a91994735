import fc from 'fast-check';
import { insideRing } from '@fleet/shared/events/ring';
import { containsPoint, type GeofenceArea } from './geofence-area';
import { indexGeofences, placedGeofence } from './geofence-index';
import { indexRing } from './ring-index';
import { combRing } from '../../../bench/src/worst-geofences';

const longitude = fc.double({ min: -180, max: 180, noNaN: true });
const latitude = fc.double({ min: -90, max: 90, noNaN: true });

/** A star-shaped ring around a center: any number of positions, never crossing itself. */
const starRing = fc
  .tuple(
    fc.double({ min: -170, max: 170, noNaN: true }),
    fc.double({ min: -80, max: 80, noNaN: true }),
    fc.array(fc.double({ min: 0.001, max: 9, noNaN: true }), { minLength: 3, maxLength: 400 }),
  )
  .map(([lon, lat, radii]) => {
    const ring = radii.map((r, k) => [
      lon + r * Math.cos((2 * Math.PI * k) / radii.length),
      lat + r * Math.sin((2 * Math.PI * k) / radii.length),
    ]);
    return [...ring, ring[0]!];
  });

describe('the ring index', () => {
  it('answers as the plain ray cast for star rings, at random points and at their own positions', () => {
    fc.assert(
      fc.property(
        starRing,
        fc.array(fc.tuple(fc.double({ min: -1, max: 1, noNaN: true }), fc.double({ min: -1, max: 1, noNaN: true }))),
        (ring, shares) => {
          const index = indexRing(ring);
          const [x0, y0] = ring[0]!;
          const points = [...shares.map(([a, b]) => [x0! + a * 10, y0! + b * 10]), ...ring];
          for (const [x, y] of points) expect(index.contains(x!, y!)).toBe(insideRing(ring, x!, y!));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('answers as the plain ray cast for a comb of a thousand positions spanning the globe', () => {
    const ring = combRing(1000, -179, -89, 179, 89);
    expect(ring.length).toBeLessThanOrEqual(1000);
    const index = indexRing(ring);
    fc.assert(
      fc.property(longitude, latitude, (x, y) => {
        expect(index.contains(x, y)).toBe(insideRing(ring, x, y));
      }),
      { numRuns: 50_000 },
    );
    // On the notches' edges and corners, exactly.
    for (const [x, y] of ring) expect(index.contains(x!, y!)).toBe(insideRing(ring, x!, y!));
  });
});

describe('the geofence index', () => {
  const areas: GeofenceArea[] = [
    { type: 'Circle', center: [13.4, 52.5], radiusMeters: 500 },
    { type: 'Circle', center: [0, 0], radiusMeters: 8_000_000 },
    { type: 'Circle', center: [179.9, 10], radiusMeters: 300_000 },
    { type: 'Circle', center: [0, 89.9], radiusMeters: 100_000 },
    {
      type: 'Polygon',
      coordinates: [
        [
          [-170, -80],
          [170, -80],
          [170, 80],
          [-170, 80],
          [-170, -80],
        ],
        combRing(400, -100, -50, 100, 50).reverse(),
      ],
    },
    {
      type: 'Polygon',
      coordinates: [
        [
          [13, 52],
          [14, 52],
          [14, 53],
          [13, 53],
          [13, 52],
        ],
      ],
    },
  ];
  const geofences = areas.map((area, i) => placedGeofence({ id: (i + 1) * 10, name: `g${i}`, area, speedLimitKmh: null }));
  const index = indexGeofences(geofences);
  const expected = (x: number, y: number) => geofences.filter((fence) => containsPoint(fence.area, x, y)).map((fence) => fence.id);

  it('finds the same geofences as testing every area, in id order', () => {
    fc.assert(
      fc.property(longitude, latitude, (x, y) => {
        expect(index.inside(x, y).ids).toEqual(expected(x, y));
      }),
      { numRuns: 20_000 },
    );
    // Near the small ones, where the grid's cells matter.
    fc.assert(
      fc.property(fc.double({ min: 12.9, max: 14.1, noNaN: true }), fc.double({ min: 51.9, max: 53.1, noNaN: true }), (x, y) => {
        expect(index.inside(x, y).ids).toEqual(expected(x, y));
      }),
      { numRuns: 20_000 },
    );
  });

  it('holds a point just inside a circle and not one just outside it, as the distance on the ground says', () => {
    const small = placedGeofence({
      id: 1,
      name: 'small',
      area: { type: 'Circle', center: [13.4, 52.5], radiusMeters: 10 },
      speedLimitKmh: null,
    });
    // 10 m north is about 0.0000899 degrees.
    for (const dLat of [0.00008, 0.0000898, 0.00009, 0.0001]) {
      expect(small.contains(13.4, 52.5 + dLat)).toBe(containsPoint(small.area, 13.4, 52.5 + dLat));
    }
  });
});
