// Prometheus metrics every service shares: a registry of its own per service (so several services in
// one test process never collide), the writers' counters, and the small HTTP server a writer exposes
// them on. The gateway serves its registry on its own port instead (services/gateway/src/metrics.ts).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * How often the event loop's delay is sampled for nodejs_eventloop_lag_*: prom-client's 10 ms wakes every
 * process a hundred times a second, busy or not, a cost a quiet stack pays for nothing; a delay still
 * shows in full in the sample after it.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

/** A registry labelled with the service's name, with the process and Node.js runtime metrics. */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  return registry;
}

/** What a writer's command consumer reports after each batch. */
export interface WriterMetrics {
  batch(size: number): void;
  stored(inserted: number, duplicates: number): void;
  deadLettered(count: number): void;
  storeFailed(): void;
}

export function createWriterMetrics(registry: Registry): WriterMetrics {
  const batchSize = new Histogram({
    name: 'fleet_writer_batch_size',
    help: 'Messages in each batch the writer consumed from Kafka',
    buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000],
    registers: [registry],
  });
  const inserted = new Counter({
    name: 'fleet_writer_rows_inserted_total',
    help: 'Commands stored as new rows',
    registers: [registry],
  });
  const duplicates = new Counter({
    name: 'fleet_writer_duplicates_skipped_total',
    help: 'Commands already stored (client retries and Kafka redeliveries), answered with the existing row',
    registers: [registry],
  });
  const deadLettered = new Counter({
    name: 'fleet_writer_dead_lettered_total',
    help: 'Messages sent to the dead-letter topic: undecodable, or refused by the database',
    registers: [registry],
  });
  // The failing store is logged once per outage; this counts every attempt, so a rate shows it lasting.
  const storeFailures = new Counter({
    name: 'fleet_writer_store_failures_total',
    help: 'Attempts to store a batch that failed for a reason other than its data (PostgreSQL away or refusing); each is retried',
    registers: [registry],
  });
  return {
    batch: (size) => batchSize.observe(size),
    stored(rows, skipped) {
      inserted.inc(rows);
      duplicates.inc(skipped);
    },
    deadLettered: (count) => deadLettered.inc(count),
    storeFailed: () => storeFailures.inc(),
  };
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/** Serves `GET /metrics` on its own port (0 picks a free one). */
export async function serveMetrics(registry: Registry, port: number): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found: metrics are at GET /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
      (error: Error) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`${error.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      return closed;
    },
  };
}
