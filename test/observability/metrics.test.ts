// Prometheus metrics: after real traffic through a running stack, the gateway's and the writers'
// counters have moved, labelled by route pattern and status, each service in its own registry.
import { buildCategory, insertCategory } from '../categories/category-support';
import { buildGroup, buildTrip, closeDb, postJson, signToken, TEST_API_KEY, type Stack } from '../support/harness';
import { closeKafka, produceRaw } from '../support/kafka';
import { scrape, scrapeUntil, type Scrape } from '../support/scrape';
import { CATEGORY_BASE_PATH, TRIP_LOCATION_PATH, VEHICLE_GROUP_PATH } from '../../services/gateway/src/http/routes';
import { startStack } from '../support/stack';

const TRIP = TRIP_LOCATION_PATH;
const CATEGORY_ROUTE = `${CATEGORY_BASE_PATH}/:id`;
const REQUESTS = 'fleet_http_request_duration_seconds_count';

let stack: Stack;
let gatewayMetrics: Scrape;
let tripWriterUrl: string;
let groupWriterUrl: string;
const postedTrips = 3;

beforeAll(async () => {
  stack = await startStack({ mode: 'in-process', label: 'metrics' });
  tripWriterUrl = `http://127.0.0.1:${stack.tripWriters[0]!.metricsPort}/metrics`;
  groupWriterUrl = `http://127.0.0.1:${stack.groupWriters[0]!.metricsPort}/metrics`;
  const auth = { authorization: `Bearer ${await signToken()}` };

  const trips = Array.from({ length: postedTrips }, () => buildTrip());
  for (const trip of trips) expect((await postJson(`${stack.url}${TRIP}`, trip, auth)).status).toBe(200);
  // The same position again: stored once, answered as a duplicate.
  expect((await postJson(`${stack.url}${TRIP}`, trips[0], auth)).status).toBe(200);
  expect((await postJson(`${stack.url}${TRIP}`, buildTrip())).status).toBe(401);
  expect((await postJson(`${stack.url}${VEHICLE_GROUP_PATH}`, buildGroup(), auth)).status).toBe(200);

  const category = await insertCategory(buildCategory());
  const categoryUrl = `${stack.url}${CATEGORY_BASE_PATH}/${category.id}`;
  for (let read = 0; read < 2; read += 1) {
    expect((await fetch(categoryUrl, { headers: { authorization: TEST_API_KEY } })).status).toBe(200);
  }
  expect((await fetch(categoryUrl)).status).toBe(401);
  expect((await fetch(`${stack.url}/no/such/route?id=1`)).status).toBe(404);
  // A message no writer can decode, so that it is dead-lettered.
  await produceRaw(`${stack.prefix}.trip-locations`, [
    { key: 'garbage', value: 'not json', headers: { 'request-id': 'metrics-dead-letter' } },
  ]);

  gatewayMetrics = await scrape(`${stack.url}/metrics`);
});
afterAll(async () => {
  await stack?.stop();
  await closeKafka();
  await closeDb();
});

describe('gateway GET /metrics', () => {
  test('is Prometheus text of the gateway registry, with the process metrics', () => {
    expect(gatewayMetrics.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(gatewayMetrics.value('process_resident_memory_bytes', { service: 'gateway' })).toBeGreaterThan(0);
    expect(gatewayMetrics.has('fleet_writer_rows_inserted_total')).toBe(false);
  });

  test('counts requests by method, route pattern and status', () => {
    expect(gatewayMetrics.value(REQUESTS, { method: 'POST', route: TRIP, status: '200' })).toBe(postedTrips + 1);
    expect(gatewayMetrics.value(REQUESTS, { method: 'POST', route: TRIP, status: '401' })).toBe(1);
    expect(gatewayMetrics.value(REQUESTS, { method: 'GET', route: CATEGORY_ROUTE, status: '200' })).toBe(2);
    expect(gatewayMetrics.value('fleet_http_request_duration_seconds_sum', { route: TRIP })).toBeGreaterThan(0);
  });

  test('labels a request refused before its route ran with the route it was for, and an unknown path as unmatched', () => {
    expect(gatewayMetrics.value(REQUESTS, { method: 'GET', route: CATEGORY_ROUTE, status: '401' })).toBe(1);
    expect(gatewayMetrics.value(REQUESTS, { route: 'unmatched', status: '404' })).toBe(1);
    expect(gatewayMetrics.text).not.toContain('/no/such/route');
  });

  test('counts error answers by the code in their body, and only error answers', () => {
    const ERRORS = 'fleet_http_error_responses_total';
    expect(gatewayMetrics.value(ERRORS, { method: 'POST', route: TRIP, status: '401', code: 'E-G1/1-01' })).toBe(1);
    expect(gatewayMetrics.value(ERRORS, { method: 'GET', route: CATEGORY_ROUTE, status: '401', code: 'E-A1/1-01' })).toBe(1);
    expect(gatewayMetrics.value(ERRORS, { route: 'unmatched', status: '404', code: 'E-N1/1-02' })).toBe(1);
    expect(gatewayMetrics.value(ERRORS)).toBe(3);
  });

  test('observes Kafka produces, replies and the pending replies', () => {
    expect(gatewayMetrics.value('fleet_kafka_produce_duration_seconds_count', { result: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(gatewayMetrics.value('fleet_kafka_produce_batch_size_sum')).toBe(postedTrips + 2);
    expect(gatewayMetrics.value('fleet_kafka_reply_duration_seconds_count', { outcome: 'replied' })).toBe(postedTrips + 2);
    expect(gatewayMetrics.has('fleet_kafka_pending_replies')).toBe(true);
    expect(gatewayMetrics.value('fleet_kafka_pending_replies')).toBe(0);
  });

  test('counts category cache misses and hits', () => {
    expect(gatewayMetrics.value('fleet_category_cache_lookups_total', { result: 'miss' })).toBe(1);
    expect(gatewayMetrics.value('fleet_category_cache_lookups_total', { result: 'hit' })).toBe(1);
  });
});

describe('writer GET /metrics on METRICS_PORT', () => {
  test('the trip-writer counts batches, rows inserted and duplicates skipped', async () => {
    const metrics = await scrapeUntil(
      tripWriterUrl,
      (m) =>
        m.value('fleet_writer_rows_inserted_total') >= postedTrips &&
        m.value('fleet_writer_duplicates_skipped_total') >= 1 &&
        m.value('fleet_writer_dead_lettered_total') >= 1,
    );
    expect(metrics.value('fleet_writer_rows_inserted_total', { service: 'trip-writer' })).toBe(postedTrips);
    expect(metrics.value('fleet_writer_duplicates_skipped_total')).toBe(1);
    expect(metrics.value('fleet_writer_batch_size_count')).toBeGreaterThanOrEqual(1);
    // The posted trips, the repeated one and the message that was dead-lettered.
    expect(metrics.value('fleet_writer_batch_size_sum')).toBe(postedTrips + 2);
    expect(metrics.has('fleet_http_request_duration_seconds_count')).toBe(false);
  });

  test('the group-writer counts the group it stored', async () => {
    const metrics = await scrapeUntil(groupWriterUrl, (m) => m.value('fleet_writer_rows_inserted_total') >= 1);
    expect(metrics.value('fleet_writer_rows_inserted_total', { service: 'group-writer' })).toBe(1);
  });

  test('a message that cannot be decoded is counted as dead-lettered', async () => {
    const metrics = await scrapeUntil(tripWriterUrl, (m) => m.value('fleet_writer_dead_lettered_total') >= 1);
    expect(metrics.value('fleet_writer_dead_lettered_total')).toBe(1);
  });

  test('any other path on the metrics port is a 404', async () => {
    expect((await fetch(tripWriterUrl.replace('/metrics', '/'))).status).toBe(404);
  });
});
