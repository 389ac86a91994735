// The Teltonika listener: a TCP server for devices speaking Codec 8 / 8 Extended, publishing their
// records through the same command bus as the gateway (a reply partition of its own, the trip-writer
// storing them) and acknowledging each packet once committed. GET /metrics, /readyz and /healthz on
// METRICS_PORT.
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { createPool } from '@fleet/shared/db/pool';
import { createKafka } from '@fleet/shared/kafka/client';
import { createKafkaOutageMetrics } from '@fleet/shared/kafka/client-outage';
import { topicsFor } from '@fleet/shared/kafka/topics';
import { createLogger, type Logger } from '@fleet/shared/logger';
import { createMetricsRegistry } from '@fleet/shared/metrics';
import { DeviceRegistry } from '@fleet/write-path/devices/device-registry';
import { registryLookups } from '@fleet/write-path/devices/registry-lookups';
import { trackerSubject } from '@fleet/write-path/rate-limits/write-limits';
import { createWritePath } from '@fleet/write-path/write-path';
import { createRedis } from '@fleet/write-path/redis';
import { trackerPositionRequestSchema } from '@fleet/write-path/trip-request';
import type { TeltonikaConfig } from './config';
import { createTeltonikaMetrics } from './metrics';
import { serveSession } from './session';

export interface TeltonikaListener {
  /** The TCP port devices connect to. */
  port: number;
  metricsPort: number;
  stop(): Promise<void>;
}

export async function startTeltonika(
  config: TeltonikaConfig,
  logger: Logger = createLogger('teltonika', config.LOG_LEVEL),
): Promise<TeltonikaListener> {
  const registry = createMetricsRegistry('teltonika');
  const metrics = createTeltonikaMetrics(registry);
  const pool = createPool(
    { connectionString: config.DATABASE_URL, max: config.DATABASE_POOL_SIZE, applicationName: 'fleet-teltonika' },
    logger,
  );
  const redis = createRedis(config.REDIS_URL, config.RATE_LIMIT_REDIS_TIMEOUT_MS);
  redis.on('error', () => undefined);
  const kafka = createKafka({
    brokers: config.KAFKA_BROKERS,
    clientId: `fleet-${config.instanceId}`,
    logger,
    outages: createKafkaOutageMetrics(registry),
  });
  const topics = topicsFor(config.KAFKA_TOPIC_PREFIX);
  const { bus, limits } = createWritePath(config, { kafka, topics, redis, logger });
  const devices = new DeviceRegistry(registryLookups(pool));

  const closeAll = async () => {
    await Promise.allSettled([bus.stop(), pool.end(), redis.quit().catch(() => redis.disconnect())]);
  };
  try {
    await pool.query('SELECT 1');
    await redis
      .connect()
      .catch((error: Error) => logger.warn({ err: error.message }, 'Redis is unreachable: rate limits open until it answers'));
    await bus.start();
  } catch (error) {
    await closeAll();
    throw error;
  }

  const sessions = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sessions.add(socket);
    socket.once('close', () => sessions.delete(socket));
    serveSession(socket, {
      registry: devices,
      bus,
      topic: topics.tripLocations,
      trackerPosition: trackerPositionRequestSchema({
        maxFutureSkewMs: config.MAX_FUTURE_SKEW,
        maxPastAgeMs: config.MAX_PAST_AGE,
        retentionDays: config.TRIP_RETENTION_DAYS,
      }),
      admit: (imei, positions) => limits.admit(trackerSubject(imei), new Map([[imei, positions]])),
      metrics,
      logger,
      idleTimeoutMs: config.TELTONIKA_IDLE_TIMEOUT_MS,
      handshakeTimeoutMs: config.TELTONIKA_HANDSHAKE_TIMEOUT_MS,
    });
  });
  server.maxConnections = config.TELTONIKA_MAX_CONNECTIONS;
  server.on('drop', () => metrics.refused('capacity'));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.TELTONIKA_PORT, resolve);
  });

  let stopping = false;
  const probes = http.createServer((req, res) => {
    const path = req.url?.split('?')[0];
    const answer = (status: number, body: object) =>
      res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    if (req.method !== 'GET') return answer(405, { error: 'GET only' });
    if (path === '/healthz') return answer(200, { status: 'alive' });
    if (path === '/readyz') {
      const ready = !stopping && bus.isReady();
      return answer(ready ? 200 : 503, { status: ready ? 'ready' : 'unavailable', reason: stopping ? 'stopping' : bus.notReadyReason() });
    }
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
        (error: Error) => res.writeHead(500).end(error.message),
      );
      return;
    }
    answer(404, { error: 'not found: /metrics, /readyz, /healthz' });
  });
  await new Promise<void>((resolve, reject) => {
    probes.once('error', reject);
    probes.listen(config.METRICS_PORT, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  const metricsPort = (probes.address() as AddressInfo).port;
  logger.info({ port, metricsPort, instanceId: config.instanceId }, 'Teltonika listener accepting devices');

  return {
    port,
    metricsPort,
    async stop() {
      stopping = true;
      // No new devices; packets being stored finish (their acknowledgements are sent) while the bus
      // drains, and any packet after them is refused unacknowledged; then the connections close.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await bus.stop();
      for (const socket of sessions) socket.destroy();
      await closed;
      await new Promise<void>((resolve) => {
        probes.close(() => resolve());
        probes.closeAllConnections();
      });
      await Promise.allSettled([pool.end(), redis.quit().catch(() => redis.disconnect())]);
    },
  };
}
