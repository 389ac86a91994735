import { containsPoint, distanceMeters } from './geofence-area';

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
