// A geofence body the tests create: a square of five positions (the last the first) near Jakarta, with a
// speed limit of 30 km/h.
export const squareGeofence = (name: string) => ({
  name,
  area: {
    type: 'Polygon',
    coordinates: [
      [
        [106.8, -6.2],
        [106.81, -6.2],
        [106.81, -6.19],
        [106.8, -6.19],
        [106.8, -6.2],
      ],
    ],
  },
  speedLimitKmh: 30,
});

/** A closed square ring of side `size` degrees with its south-west corner at (longitude, latitude). */
export const squareRing = (longitude: number, latitude: number, size: number) => [
  [longitude, latitude],
  [longitude + size, latitude],
  [longitude + size, latitude + size],
  [longitude, latitude + size],
  [longitude, latitude],
];
