// The costliest geofence set the limits allow must not stop the events: every box spans the globe, so
// every fix is tested against every geofence. Its work is done outside the batch's transaction, so none
// stays open until PostgreSQL ends it (as the service's pool is set up), and in slices of the event loop,
// so the processor's metrics answer meanwhile. On its own database: geofences apply to every device.
import http from 'node:http';
import { createPool, IDLE_IN_TRANSACTION_TIMEOUT_MS } from '@fleet/shared/db/pool';
import { createLogger } from '@fleet/shared/logger';
import { createMetricsRegistry, serveMetrics } from '@fleet/shared/metrics';
import type { Registry } from 'prom-client';
import type { PositionEvent } from '@fleet/shared/schemas/position-event';
import { geofenceRequestSchema } from '@fleet/gateway/geofences/geofence.schema';
import { containsPoint } from '../../services/event-processor/src/geofence-area';
import { createEventMetrics } from '../../services/event-processor/src/metrics';
import { positionProcessor, TRANSACTION_EVENTS } from '../../services/event-processor/src/process-positions';
import { seeded, worstGeofenceSet } from '../../bench/src/worst-geofences';
import { privateDatabase, type PrivateDatabase } from '../support/private-database';

let database: PrivateDatabase;
const set = worstGeofenceSet(seeded(72));

beforeAll(async () => {
  database = await privateDatabase('worst-geofences');
  await database.pool.query('INSERT INTO geofences (name, area) SELECT * FROM unnest($1::text[], $2::jsonb[])', [
    set.map((fence) => fence.name),
    set.map((fence) => JSON.stringify(fence.area)),
  ]);
}, 120_000);
afterAll(async () => {
  await database?.drop();
});

const DEVICES = 4;
const FIXES = 2000;
/** Where each device stays, moving some metres a fix: between the hole's teeth and in many circles. */
const places = [
  [106.8, -6.2],
  [13.4, 52.5],
  [-46.6, -23.5],
  [151.2, -33.9],
];

function fixes(): PositionEvent[] {
  const start = Date.now() - FIXES * 1000;
  return Array.from({ length: FIXES }, (_, i) => {
    const device = i % DEVICES;
    const [longitude, latitude] = places[device]!;
    return {
      id: i + 1,
      imei: `35693803564${String(device).padStart(4, '0')}`,
      gpsTime: new Date(start + i * 1000).toISOString(),
      longitude: longitude! + (i % 7) * 0.0001,
      latitude: latitude!,
      speed: 20,
      ignition: null,
      angle: null,
      satellite: null,
      door1: null,
      door2: null,
      temp: null,
      fuel_percentage: null,
      attributes: null,
      receivedAt: new Date().toISOString(),
    };
  });
}

const scrape = (port: number) =>
  new Promise<number>((resolve, reject) => {
    http.get(`http://127.0.0.1:${port}/metrics`, (response) => resolve(response.resume().statusCode ?? 0)).on('error', reject);
  });

/**
 * A position processor on a pool set up as the service's own (a transaction idle for 5 s is ended by the
 * server), with its metrics registry; both closed after `work`.
 */
async function withProcessor(work: (process: (positions: PositionEvent[]) => Promise<void>, registry: Registry) => Promise<void>) {
  const pool = createPool({
    connectionString: database.url,
    max: 4,
    applicationName: 'test',
    idleInTransactionTimeoutMs: IDLE_IN_TRANSACTION_TIMEOUT_MS,
  });
  const registry = createMetricsRegistry('event-processor');
  try {
    await work(
      positionProcessor({
        pool,
        logger: createLogger('test', 'warn'),
        metrics: createEventMetrics(registry, pool),
        defaultSpeedLimitKmh: 0,
      }),
      registry,
    );
  } finally {
    await pool.end();
  }
}

test('2,000 fixes against the worst geofence set the limits allow are all processed, their enters raised, the metrics answering meanwhile', async () => {
  for (const fence of set) expect(geofenceRequestSchema.safeParse(fence).success).toBe(true);
  expect(set.length).toBe(10_000);

  await withProcessor(async (process, registry) => {
    const metrics = await serveMetrics(registry, 0);
    try {
      const all = fixes();
      let done = false;
      const processing = process(all).finally(() => (done = true));
      // Scraped once the work has begun: it answers before the work ends.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await scrape(metrics.port)).toBe(200);
      expect(done).toBe(false);
      await processing;

      const states = await database.pool.query<{ imei: string; last_position_id: string; geofences: number }>(
        'SELECT imei, last_position_id, cardinality(geofence_ids) AS geofences FROM event_device_states ORDER BY imei',
      );
      expect(states.rows.map((row) => Number(row.last_position_id))).toEqual([1997, 1998, 1999, 2000]);
      for (const [device, row] of states.rows.entries()) {
        const first = all[device]!;
        const expected = set.filter((fence) => containsPoint(fence.area, first.longitude, first.latitude)).length;
        expect(expected).toBeGreaterThan(1000);
        expect(row.geofences).toBe(expected);
        const enters = await database.pool.query('SELECT count(*)::int AS n FROM events WHERE imei = $1 AND type = $2', [
          row.imei,
          'geofenceEnter',
        ]);
        expect(enters.rows[0].n).toBe(expected);
      }
    } finally {
      await metrics.close();
    }
  });
}, 180_000);

test('first fixes of many devices at once, each entering thousands of geofences, are all applied across transactions of bounded events', async () => {
  await withProcessor(async (process) => {
    const [longitude, latitude] = places[0]!;
    const firsts = Array.from({ length: 20 }, (_, i) => ({
      ...fixes()[0]!,
      id: 10_000 + i,
      imei: `35693803565${String(i).padStart(4, '0')}`,
    }));
    await process(firsts);
    const inside = set.filter((fence) => containsPoint(fence.area, longitude!, latitude!)).length;
    // More than TRANSACTION_EVENTS in all: more than one transaction.
    expect(inside * firsts.length).toBeGreaterThan(TRANSACTION_EVENTS);
    const { rows } = await database.pool.query<{ imei: string; n: number }>(
      "SELECT imei, count(*)::int AS n FROM events WHERE type = 'geofenceEnter' AND imei LIKE '35693803565%' GROUP BY imei ORDER BY imei",
    );
    expect(rows.map((row) => row.n)).toEqual(firsts.map(() => inside));
  });
}, 180_000);
