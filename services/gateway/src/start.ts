// Starts the gateway: connects PostgreSQL and Kafka (failing with one clear line when one is
// unreachable) and Redis (a cache: without it the gateway starts degraded), then serves HTTP. Returns a handle whose stop() shuts down in order.
import { setTimeout as sleep } from 'node:timers/promises';
import type { AddressInfo } from 'node:net';
import bytes from 'bytes';
import type { Express } from 'express';
import { Redis } from 'ioredis';
import { createPool, redactUrl } from '@fleet/shared/db/pool';
import { AdminClient } from '@fleet/shared/kafka/admin-client';
import { createKafka, kafkaClientSettings } from '@fleet/shared/kafka/client';
import { createKafkaOutageMetrics } from '@fleet/shared/kafka/client-outage';
import { missingTopics, missingTopicsMessage } from '@fleet/shared/kafka/topic-check';
import { topicsFor } from '@fleet/shared/kafka/topics';
import { createLogger, type Logger } from '@fleet/shared/logger';
import { commandDrainMs } from '@fleet/shared/stop-deadline';
import { createApiKeyAuth } from './api-keys/api-key-auth';
import { activeApiKeyHashes } from './api-keys/api-key-store';
import { createTokenVerifier } from './auth/token-verifier';
import { createCategoryCache } from './categories/category-cache';
import { categoryStore } from './categories/category-store';
import { createCategoryReader } from './categories/get-category';
import { DeviceRegistry } from '@fleet/write-path/devices/device-registry';
import { registryLookups } from '@fleet/write-path/devices/registry-lookups';
import { createRedis, REDIS_CONNECT_TIMEOUT_MS } from '@fleet/write-path/redis';
import type { GatewayConfig } from './config';
import { createHttp } from './http/app';
import { createBodyBudget } from './http/body-budget';
import { drain, listen } from './http/server';
import { createDeviceStatusReader } from './positions/device-status';
import { createPositionReader } from './positions/read-positions';
import { deviceStatusStore } from './positions/device-status-store';
import { findMissedPositions, positionStore } from './positions/position-store';
import { deviceAdministration, deviceEnrolment } from './devices/device-store';
import { createDeviceManagement } from './devices/manage-device';
import { eventStore } from './events/event-store';
import { createEventReader } from './events/events';
import { EventFeed } from './streams/event-feed';
import { privateAddressOf } from '@fleet/shared/events/public-address';
import { webhookStore } from './webhooks/webhook-store';
import { createWebhooks } from './webhooks/webhooks';
import { geofenceStore } from './geofences/geofence-store';
import { createGeofences } from './geofences/geofences';
import { groupStore } from './vehicle-groups/group-store';
import { createGroupReader } from './vehicle-groups/read-vehicle-groups';
import type { CommandBus } from '@fleet/write-path/kafka/command-bus';
import { PositionFeed } from './streams/position-feed';
import { createWritePath } from '@fleet/write-path/write-path';
import { createGatewayMetrics } from './metrics';
import { trackerPositionRequestSchema, tripRequestSchema } from '@fleet/write-path/trip-request';

export { gatewayConfig, type GatewayConfig } from './config';
export { importCategories, type ImportResult } from './categories/import-categories';
export { readCategoryFile } from './categories/category-file';

export interface Gateway {
  port: number;
  url: string;
  bus: CommandBus;
  /** The express app, for tests that read its route table. */
  app: Express;
  stop(): Promise<void>;
}

export class StartupError extends Error {
  override name = 'StartupError';
}

const PING_RETRY_PAUSE_MS = 50;

/**
 * Start-up's check that Redis answers. Each ping has a cache lookup's short budget
 * (REDIS_COMMAND_TIMEOUT_MS); on a busy host one can miss it while Redis is perfectly well, so pings are
 * repeated for as long as a connection may take before Redis counts as unreachable.
 */
async function pingWithin(redis: Redis, deadlineMs: number): Promise<void> {
  const giveUpAt = Date.now() + deadlineMs;
  for (;;) {
    try {
      await redis.ping();
      return;
    } catch (error) {
      if (Date.now() >= giveUpAt) throw error;
      // A ping refused at once (a connection closing) would otherwise be retried in a tight loop.
      await sleep(PING_RETRY_PAUSE_MS);
    }
  }
}

async function reach<T>(what: string, attempt: () => Promise<T>): Promise<T> {
  try {
    return await attempt();
  } catch (error) {
    throw new StartupError(`${what}: ${(error as Error).message || String(error)}`);
  }
}

export async function start(config: GatewayConfig, logger: Logger = createLogger('gateway', config.LOG_LEVEL)): Promise<Gateway> {
  if (config.jwtSecretGenerated) {
    logger.warn('no JWT key configured: generated a throwaway development secret (set JWT_SECRET, JWT_PUBLIC_KEY or JWKS_URL)');
  }
  const tokens = createTokenVerifier({
    secret: config.JWT_SECRET,
    publicKeyPem: config.JWT_PUBLIC_KEY,
    jwksUrl: config.JWKS_URL,
    issuer: config.JWT_ISSUER,
    audience: config.JWT_AUDIENCE,
    maxLifetimeSeconds: config.JWT_MAX_LIFETIME_SECONDS,
    cacheSize: config.JWT_CACHE_SIZE,
  });

  const pool = createPool(
    { connectionString: config.DATABASE_URL, max: config.DATABASE_POOL_SIZE, applicationName: 'fleet-gateway' },
    logger,
  );
  // The fleet apps' routes read pages of up to a megabyte and may be asked for hundreds at once; on a pool
  // of their own, those reads wait for one another and never hold up a category read or the key lookup
  // a device's write needs.
  const appPool = createPool(
    { connectionString: config.DATABASE_URL, max: config.DATABASE_FLEET_APP_POOL_SIZE, applicationName: 'fleet-gateway-apps' },
    logger,
  );
  // Readiness asks PostgreSQL on a connection of its own: with every connection of the pool busy serving
  // reads, the database still answers, and a gateway taken out of service for that would take its writes,
  // which need no database here, out with it.
  const healthPool = createPool({ connectionString: config.DATABASE_URL, max: 1, applicationName: 'fleet-gateway-health' }, logger);
  const redis = createRedis(config.REDIS_URL, config.REDIS_COMMAND_TIMEOUT_MS);
  // A connection of its own for the rate limits, with their own command timeout: a cache lookup has
  // PostgreSQL behind it and gives Redis 50 ms, while a limit Redis does not answer is no limit at all.
  const limitsRedis = createRedis(config.REDIS_URL, config.RATE_LIMIT_REDIS_TIMEOUT_MS);
  let lastRedisError = '';
  // Outages are reported by the cache and the limits, once each; the listener only keeps the cause for
  // start-up errors.
  for (const client of [redis, limitsRedis]) {
    client.on('error', (error: Error) => {
      lastRedisError = error.message;
    });
  }
  const metrics = createGatewayMetrics({ pendingReplies: () => bus.pendingCount(), unsentCommands: () => bus.unsentCount() });
  const kafka = createKafka({
    brokers: config.KAFKA_BROKERS,
    clientId: `fleet-gateway-${config.instanceId}`,
    logger,
    outages: createKafkaOutageMetrics(metrics.registry),
  });
  const topics = topicsFor(config.KAFKA_TOPIC_PREFIX);
  const neededTopics = [topics.tripLocations, topics.vehicleGroups, topics.replies, topics.positions];
  const eventFeed = new EventFeed({ connectionString: config.DATABASE_URL, logger });
  const feed = new PositionFeed({
    kafka,
    topic: topics.positions,
    // A group of its own: each gateway reads every committed position, for whichever devices its streams follow.
    groupId: `${topics.positions}.stream.${config.instanceId}`,
    settings: kafkaClientSettings(config),
    logger,
  });
  const topicAdmin = new AdminClient(kafka.admin());
  const missingNow = () => topicAdmin.ask((admin) => missingTopics(admin, neededTopics));
  const { bus, limits } = createWritePath(config, {
    kafka,
    topics,
    redis: limitsRedis,
    logger,
    observe: { onPublish: metrics.observePublish, onReply: metrics.observeReply, onReplyRead: metrics.countReplyRead },
    onLimitFallback: metrics.countRateLimitFallback,
  });

  const apiKeys = createApiKeyAuth({
    storedKeys: () => activeApiKeyHashes(pool),
    configuredKeys: config.API_KEYS,
    refreshSeconds: config.API_KEY_REFRESH_SECONDS,
    logger,
  });

  const closeAll = async () => {
    apiKeys.stop();
    await Promise.allSettled([
      bus.stop(),
      topicAdmin.close(),
      pool.end(),
      appPool.end(),
      healthPool.end(),
      ...[redis, limitsRedis].map((client) => client.quit().catch(() => client.disconnect())),
    ]);
  };
  try {
    await reach(`PostgreSQL is unreachable at ${redactUrl(config.DATABASE_URL)}`, () => pool.query('SELECT 1'));
    // Redis is a cache and the rate limits fail open: a gateway starts without it, serving category
    // reads from PostgreSQL, and uses it as soon as it answers (the clients keep reconnecting).
    try {
      await Promise.all([redis.connect(), limitsRedis.connect()]);
      await pingWithin(redis, REDIS_CONNECT_TIMEOUT_MS);
    } catch (error) {
      logger.warn(
        { err: lastRedisError || (error as Error).message },
        `Redis is unreachable at ${redactUrl(config.REDIS_URL)}: serving without it (category reads from PostgreSQL, rate limits open) until it answers`,
      );
    }
    await reach(`Kafka is unreachable at ${config.KAFKA_BROKERS.join(',')}`, () => topicAdmin.connect());
    const missing = await reach(`Kafka is unreachable at ${config.KAFKA_BROKERS.join(',')}`, missingNow);
    if (missing.length > 0) throw new StartupError(missingTopicsMessage(missing));
    await reach(`Kafka is unreachable at ${config.KAFKA_BROKERS.join(',')}`, () => bus.start());
    await reach('cannot load the API keys', () => apiKeys.start());
  } catch (error) {
    redis.disconnect();
    limitsRedis.disconnect();
    await closeAll();
    throw error;
  }

  let stopping = false;
  const timeWindow = {
    maxFutureSkewMs: config.MAX_FUTURE_SKEW,
    maxPastAgeMs: config.MAX_PAST_AGE,
    retentionDays: config.TRIP_RETENTION_DAYS,
  };
  const { app, listener, streams } = createHttp({
    logger,
    trustProxy: config.TRUST_PROXY,
    health: {
      pingDatabase: () => healthPool.query('SELECT 1'),
      pingCache: () => redis.ping(),
      bus,
      missingTopics: missingNow,
      isStopping: () => stopping,
    },
    writes: {
      bus,
      refusalBeforeBody: () => bus.fullRefusal(),
      topics,
      tokens,
      requiredScopes: config.JWT_REQUIRED_SCOPES,
      deviceClaim: config.JWT_DEVICE_CLAIM,
      bodyLimit: config.BODY_LIMIT,
      bodyBudget: createBodyBudget({
        maxBytes: config.MAX_BUFFERED_BODY_BYTES,
        bodyLimitBytes: bytes.parse(config.BODY_LIMIT)!,
        minBytesPerSecond: config.BODY_MIN_BYTES_PER_SECOND,
        rateGraceMs: config.BODY_RATE_GRACE_MS,
      }),
      limits,
      tripRequest: tripRequestSchema(timeWindow),
    },
    enrolment: deviceEnrolment(appPool),
    management: createDeviceManagement(deviceAdministration(appPool)),
    trackers: {
      registry: new DeviceRegistry(registryLookups(pool)),
      trackerPosition: trackerPositionRequestSchema(timeWindow),
      speedUnit: config.OSMAND_SPEED_UNIT,
    },
    apiKeys,
    categories: {
      reader: createCategoryReader({
        categories: categoryStore(pool),
        cache: createCategoryCache({
          redis,
          prefix: config.CACHE_KEY_PREFIX,
          ttlSeconds: config.CATEGORY_CACHE_TTL_SECONDS,
          notFoundTtlSeconds: config.CATEGORY_NOT_FOUND_TTL_SECONDS,
          logger,
          lookups: metrics.cacheLookups,
        }),
      }),
    },
    positions: {
      tokens,
      requiredScopes: config.JWT_REQUIRED_SCOPES,
      deviceClaim: config.JWT_DEVICE_CLAIM,
      reader: createPositionReader({ positions: positionStore(appPool) }),
      statuses: createDeviceStatusReader({ devices: deviceStatusStore(appPool), offlineAfterMs: config.DEVICE_OFFLINE_AFTER }),
    },
    groups: { tokens, requiredScopes: config.JWT_REQUIRED_SCOPES, reader: createGroupReader(groupStore(appPool)) },
    geofences: createGeofences(geofenceStore(appPool), { geofences: config.GEOFENCES_MAX, positions: config.GEOFENCES_MAX_POSITIONS }),
    events: {
      reader: createEventReader(eventStore(appPool)),
      store: eventStore(appPool),
      feed: eventFeed,
      deviceClaim: config.JWT_DEVICE_CLAIM,
      metrics,
    },
    webhooks: createWebhooks({
      store: webhookStore(appPool),
      privateAddressOf,
      allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
      maxWebhooks: config.WEBHOOKS_MAX,
    }),
    streams: {
      feed,
      findMissed: (request) => findMissedPositions(appPool, request),
      tokens,
      requiredScopes: config.JWT_REQUIRED_SCOPES,
      deviceClaim: config.JWT_DEVICE_CLAIM,
      metrics,
    },
    streamLimits: { maxStreams: config.MAX_STREAMS, maxStreamsPerSubject: config.MAX_STREAMS_PER_SUBJECT },
    metrics,
  });
  const server = await listen(listener, {
    port: config.PORT,
    headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
  });
  const port = (server.address() as AddressInfo).port;
  logger.info({ port, instanceId: config.instanceId, topics }, 'gateway listening');

  return {
    port,
    url: `http://127.0.0.1:${port}`,
    bus,
    app,
    async stop() {
      if (stopping) return;
      stopping = true;
      logger.info('gateway stopping: draining in-flight requests');
      await drain(server, { streams, graceMs: commandDrainMs(config.REPLY_TIMEOUT_MS) });
      await Promise.all([feed.stop(), eventFeed.stop()]);
      await closeAll();
      logger.info('gateway stopped');
    },
  };
}
