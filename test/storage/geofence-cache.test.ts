// Every event processor holds every geofence, and looks for a change before each batch. A change must
// cost it what changed, not the whole set: a fleet's geofences may hold hundreds of thousands of
// positions, and one client creating and deleting geofences in a loop would otherwise keep every
// processor parsing them all, delaying every device's events.
import type { Pool, QueryConfig } from 'pg';
import { geofenceCache } from '../../services/event-processor/src/event-store';
import type { GeofenceIndex } from '../../services/event-processor/src/geofence-index';
import { privateDatabase, type PrivateDatabase } from '../support/private-database';

let database: PrivateDatabase;
/** Each statement sent through `noting`: its text and the rows it answered. */
const sent: Array<{ text: string; rows: number }> = [];
let noting: Pick<Pool, 'query'>;

beforeAll(async () => {
  database = await privateDatabase('geofence-cache');
  noting = {
    query: async (statement: string | QueryConfig, values?: unknown[]) => {
      const result = await database.pool.query(statement, values);
      sent.push({ text: typeof statement === 'string' ? statement : statement.text, rows: result.rowCount ?? 0 });
      return result;
    },
  } as unknown as Pick<Pool, 'query'>;
});
afterAll(async () => {
  await database?.drop();
});

const circle = (longitude: number) => ({ type: 'Circle', center: [longitude, -6.2], radiusMeters: 100 });

async function create(name: string, longitude: number): Promise<number> {
  const { rows } = await database.pool.query<{ id: string }>(
    'INSERT INTO geofences (name, area, speed_limit_kmh) VALUES ($1, $2, 30) RETURNING id',
    [name, JSON.stringify(circle(longitude))],
  );
  return Number(rows[0]!.id);
}

/** The geofences the cache answers, by name, and the statements it sent for them. */
async function read(geofences: () => Promise<GeofenceIndex>) {
  const before = sent.length;
  const names = [...(await geofences()).byId.values()].map((geofence) => geofence.name);
  const statements = sent.slice(before);
  const rowsParsed = statements.filter((s) => s.text.includes('SELECT id, name, area')).reduce((sum, s) => sum + s.rows, 0);
  return { names, statements: statements.length, rowsParsed };
}

test('a create reads only the new geofence, a delete none, and no change nothing but the version', async () => {
  const geofences = geofenceCache(noting);
  for (let i = 0; i < 50; i += 1) await create(`fence-${i}`, 100 + i / 100);
  const all = Array.from({ length: 50 }, (_, i) => `fence-${i}`);

  const first = await read(geofences);
  expect(first.names).toEqual(all);
  expect(first.rowsParsed).toBe(50);

  expect(await read(geofences)).toEqual({ names: all, statements: 1, rowsParsed: 0 });

  await create('fence-new', 101);
  const afterCreate = await read(geofences);
  expect(afterCreate.names).toEqual([...all, 'fence-new']);
  expect(afterCreate.rowsParsed).toBe(1);

  await database.pool.query("DELETE FROM geofences WHERE name IN ('fence-7', 'fence-new')");
  const afterDelete = await read(geofences);
  expect(afterDelete.names).toEqual(all.filter((name) => name !== 'fence-7'));
  expect(afterDelete.rowsParsed).toBe(0);

  // A delete and a create together leave the count as it was; the highest id still moves.
  await database.pool.query("DELETE FROM geofences WHERE name = 'fence-8'");
  await create('fence-last', 102);
  const afterBoth = await read(geofences);
  expect(afterBoth.names).toEqual([...all.filter((name) => name !== 'fence-7' && name !== 'fence-8'), 'fence-last']);
  expect(afterBoth.rowsParsed).toBe(1);
});

test('each geofence comes with its area, the box it lies in, its speed limit and its test', async () => {
  const id = await create('fence-detail', 106.8);
  const index = await geofenceCache(database.pool)();
  const geofence = index.byId.get(id);
  expect(geofence).toEqual({
    id,
    name: 'fence-detail',
    area: circle(106.8),
    bounds: { west: expect.any(Number), south: expect.any(Number), east: expect.any(Number), north: expect.any(Number) },
    speedLimitKmh: 30,
    contains: expect.any(Function),
  });
  expect(index.inside(106.8, -6.2).ids).toContain(id);
  expect(index.inside(106.8, -6.21).ids).not.toContain(id);
  expect(geofence!.bounds.west).toBeLessThan(106.8);
  expect(geofence!.bounds.east).toBeGreaterThan(106.8);
});
