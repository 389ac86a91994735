import { buildTrip, closeDb, db, postJson, signToken, startStack, type Stack } from '../support/harness';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack('smoke');
});
afterAll(async () => {
  await stack?.stop();
  await closeDb();
});

test('a trip location posted as JSON is stored and its id returned', async () => {
  const token = await signToken();
  const trip = buildTrip();
  const started = Date.now();
  const res = await postJson(`${stack.url}/fleet/api/v1/trip-location`, trip, { authorization: `Bearer ${token}` });
  console.log('took', Date.now() - started, res.status, res.body);
  expect(res.status).toBe(200);
  const rows = await db().query('SELECT * FROM trip_locations WHERE id = $1', [res.body.data.id]);
  expect(rows.rows[0].imei).toBe(trip.imei);
});
