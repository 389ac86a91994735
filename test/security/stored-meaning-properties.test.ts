// Properties of the whole write path, over a bounded number of generated bodies posted to a running
// stack: whatever the gateway accepts is stored with the meaning it was sent with (read back from
// PostgreSQL), and whatever it refuses gets a 400 JSON body naming exactly the bad fields.
import fc from 'fast-check';
import { closeKafka, commandsPublished } from '../support/kafka';
import { closeDb, commandsPublishedSettled, db, signToken, type Stack } from '../support/harness';
import { formBody, invalidGroup, invalidTrip, jsonBody, validGroup, validTrip, type GroupCase, type TripCase } from './arbitraries';
import { TRIP_LOCATION_PATH, VEHICLE_GROUP_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

const RUNS = 50;

let stack: Stack;
let auth: string;

beforeAll(async () => {
  // Every gpsTime format over every instant since 1970: the past is bounded here by the formats alone.
  stack = await startStack({ mode: 'in-process', label: 'stored-meaning', env: { MAX_PAST_AGE: '100y' } });
  auth = `Bearer ${await signToken()}`;
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

async function post(path: string, body: string, contentType: string) {
  const response = await fetch(`${stack.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': contentType, authorization: auth },
    body,
  });
  return { status: response.status, contentType: response.headers.get('content-type'), body: (await response.json()) as any };
}

function postTrip(trip: TripCase, asForm: boolean) {
  return asForm
    ? post(TRIP_LOCATION_PATH, formBody(trip), 'application/x-www-form-urlencoded')
    : post(TRIP_LOCATION_PATH, JSON.stringify(jsonBody(trip)), 'application/json');
}

const issuePaths = (body: { issues: Array<{ path: string }> }) => [...new Set(body.issues.map((issue) => issue.path))].sort();

/** -0 and 0 mean the same position; jest's equality tells them apart. */
const sameNumberSign = (value: unknown) => (typeof value === 'number' ? value + 0 : value);

const COLUMNS = ['imei', 'latitude', 'longitude', 'speed', 'ignition', 'angle', 'satellite', 'door1', 'door2', 'temp', 'fuel_percentage'];

test(`an accepted trip, JSON or form, is stored with the meaning of every field (${RUNS} runs)`, async () => {
  await fc.assert(
    fc.asyncProperty(validTrip, fc.boolean(), async (trip, asForm) => {
      const answer = await postTrip(trip, asForm);
      expect(answer.status).toBe(200);
      const { rows } = await db().query('SELECT * FROM trip_locations WHERE id = $1', [answer.body.data.id]);
      const row = rows[0];
      expect(row.gps_time.toISOString()).toBe(trip.values.gpsTime!.meaning);
      for (const column of COLUMNS) expect(sameNumberSign(row[column])).toEqual(trip.values[column]?.meaning ?? null);
    }),
    { numRuns: RUNS },
  );
});

test(`a refused trip, JSON or form, gets a 400 JSON body naming exactly the bad fields, and stores nothing (${RUNS} runs)`, async () => {
  await fc.assert(
    fc.asyncProperty(invalidTrip, fc.boolean(), async (trip, asForm) => {
      const published = await commandsPublished(stack.prefix);
      const answer = await postTrip(trip, asForm);
      expect(answer.status).toBe(400);
      expect(answer.contentType).toMatch(/^application\/json/);
      expect(answer.body.code).toBe('E-V1/1-01');
      expect(issuePaths(answer.body)).toEqual(trip.invalid);
      // For every input, nothing reached the trip-writer. A row is looked for too where one could be
      // found: by a valid imei, which is unique to its case; a refused or missing imei names no row.
      expect(await commandsPublishedSettled(stack)).toBe(published);
      const imei = trip.values.imei?.meaning;
      if (typeof imei === 'string') expect((await db().query('SELECT 1 FROM trip_locations WHERE imei = $1', [imei])).rowCount).toBe(0);
    }),
    { numRuns: RUNS },
  );
});

async function storedGroup(id: number) {
  const group = await db().query('SELECT name FROM vehicle_groups WHERE id = $1', [id]);
  const members = await db().query('SELECT vehicle_id FROM vehicle_group_members WHERE vehicle_group_id = $1', [id]);
  return { name: group.rows[0]?.name, ids: members.rows.map((row) => Number(row.vehicle_id)).sort((a, b) => a - b) };
}

test(`any group body is either stored as meant (trimmed name, each id once) or refused with a 400 naming the bad part and nothing stored (${RUNS} runs)`, async () => {
  await fc.assert(
    fc.asyncProperty(fc.oneof(validGroup, invalidGroup), async (group: GroupCase) => {
      const published = await commandsPublished(stack.prefix);
      const sentAt: Date = (await db().query('SELECT clock_timestamp() AS now')).rows[0].now;
      const answer = await post(VEHICLE_GROUP_PATH, JSON.stringify(group.body), 'application/json');
      if (group.meaning) {
        expect(answer.status).toBe(200);
        expect(await storedGroup(answer.body.data.id)).toEqual(group.meaning);
        expect(answer.body.data.information).toContain(group.meaning.name);
      } else {
        expect(answer.status).toBe(400);
        expect(answer.body.code).toBe('E-V1/1-01');
        expect(issuePaths(answer.body)).toEqual(group.invalid);
        // For every input, nothing reached the group-writer. Names repeat across cases ('Valid name', the
        // SQL ones), so a row is looked for by a string name among the groups created since it was sent.
        expect(await commandsPublishedSettled(stack)).toBe(published);
        const name = group.body.vehicleGroupName;
        // PostgreSQL's text cannot hold U+0000: no row can carry such a name, and the lookup itself
        // would be refused; that nothing reached the writer is checked above.
        if (typeof name === 'string' && !name.includes('\u0000')) {
          expect((await db().query('SELECT 1 FROM vehicle_groups WHERE name = $1 AND created_at >= $2', [name, sentAt])).rowCount).toBe(0);
        }
      }
    }),
    { numRuns: RUNS },
  );
});
