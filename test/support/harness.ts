// What component tests share: the run's servers, services started in-process on port 0 with topics and
// cache keys of their own, real signed tokens, and factories for request bodies.
import { randomBytes, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { Pool } from 'pg';
import { createLogger } from '@fleet/shared/logger';
import { gatewayConfig, start as startGateway, type Gateway } from '@fleet/gateway';
import { start as startTripWriter, writerConfig } from '@fleet/trip-writer';
import { groupWriterConfig, start as startGroupWriter } from '@fleet/group-writer';
import { eventProcessorConfig, start as startEventProcessor } from '@fleet/event-processor';
import { commandsPublished, provisionTopics } from './kafka';
import { TRIP_LOCATION_PATH } from '../../services/gateway/src/http/routes';

export interface TestServers {
  databaseUrl: string;
  redisUrl: string;
  kafkaBrokers: string;
  /** Client settings the run's broker needs (none for Apache Kafka). */
  clientEnv: Record<string, string>;
}

export function testServers(): TestServers {
  const databaseUrl = process.env.FLEET_TEST_DATABASE_URL;
  const redisUrl = process.env.FLEET_TEST_REDIS_URL;
  const kafkaBrokers = process.env.FLEET_TEST_KAFKA_BROKERS;
  if (!databaseUrl || !redisUrl || !kafkaBrokers) throw new Error('run the tests through jest: the global setup provides the servers');
  if (!new URL(databaseUrl).pathname.includes('test')) throw new Error(`refusing to test against ${databaseUrl}: its name lacks "test"`);
  const clientEnv = JSON.parse(process.env.FLEET_TEST_CLIENT_ENV ?? '{}') as Record<string, string>;
  return { databaseUrl, redisUrl, kafkaBrokers, clientEnv };
}

export const TEST_JWT_SECRET = 'test-secret-that-is-long-enough-for-hs256!';
export const TEST_API_KEY = 'test-api-key-0123456789abcdef';

/** A prefix unique to one test file, for Kafka topics and cache keys. */
export function uniquePrefix(label: string): string {
  return `t${randomBytes(4).toString('hex')}.${label.replace(/[^A-Za-z0-9-]/g, '-')}`;
}

/** A unique prefix whose topics exist, provisioned as a deployment provisions them. */
export async function provisionedPrefix(label: string): Promise<string> {
  const prefix = uniquePrefix(label);
  await provisionTopics(prefix);
  return prefix;
}

export function baseEnv(prefix: string, overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  const servers = testServers();
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATABASE_URL: servers.databaseUrl,
    REDIS_URL: servers.redisUrl,
    KAFKA_BROKERS: servers.kafkaBrokers,
    ...servers.clientEnv,
    KAFKA_TOPIC_PREFIX: prefix,
    CACHE_KEY_PREFIX: `${prefix}:`,
    JWT_SECRET: TEST_JWT_SECRET,
    API_KEYS: TEST_API_KEY,
    PORT: '0',
    METRICS_PORT: '0',
    ...overrides,
  };
}

export interface Writer {
  /** Where the writer serves GET /metrics. */
  metricsPort: number;
  stop(): Promise<void>;
}

export interface Stack {
  gateway: Gateway;
  url: string;
  prefix: string;
  env: NodeJS.ProcessEnv;
  tripWriters: Writer[];
  groupWriters: Writer[];
  eventProcessors: Writer[];
  addTripWriter(): Promise<Writer>;
  stop(): Promise<void>;
}

export interface StackOptions {
  env?: Record<string, string>;
  tripWriters?: number;
  groupWriters?: number;
  /** Event processors, none unless asked for. */
  eventProcessors?: number;
}

export function startWriter(kind: 'trip' | 'group', env: NodeJS.ProcessEnv): Promise<Writer> {
  if (kind === 'trip') {
    const config = writerConfig(env);
    return startTripWriter(config, createLogger('trip-writer', config.LOG_LEVEL));
  }
  const config = groupWriterConfig(env);
  return startGroupWriter(config, createLogger('group-writer', config.LOG_LEVEL));
}

/** Gateway and writers in this process, on a topic prefix of their own. */
export async function startInProcessStack(label: string, options: StackOptions = {}): Promise<Stack> {
  const prefix = await provisionedPrefix(label);
  const env = baseEnv(prefix, options.env);
  const tripWriters = await Promise.all(Array.from({ length: options.tripWriters ?? 1 }, () => startWriter('trip', env)));
  const groupWriters = await Promise.all(Array.from({ length: options.groupWriters ?? 1 }, () => startWriter('group', env)));
  const eventProcessors = await Promise.all(
    Array.from({ length: options.eventProcessors ?? 0 }, () => {
      const config = eventProcessorConfig(env);
      return startEventProcessor(config, createLogger('event-processor', config.LOG_LEVEL));
    }),
  );
  const gateway = await startGateway(gatewayConfig(env));
  const stack: Stack = {
    gateway,
    url: gateway.url,
    prefix,
    env,
    tripWriters,
    groupWriters,
    eventProcessors,
    async addTripWriter() {
      const writer = await startWriter('trip', env);
      tripWriters.push(writer);
      return writer;
    },
    async stop() {
      await gateway.stop();
      await Promise.allSettled([...stack.tripWriters, ...stack.groupWriters, ...eventProcessors].map((service) => service.stop()));
    },
  };
  return stack;
}

export async function signToken(
  claims: Record<string, unknown> = {},
  options: {
    secret?: string;
    expiresIn?: string | number | null;
    header?: Record<string, unknown>;
    /** The `sub` claim; null leaves it out. */
    subject?: string | null;
  } = {},
): Promise<string> {
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT', ...options.header }).setIssuedAt();
  if (options.subject !== null) jwt.setSubject(options.subject ?? 'device-test');
  if (options.expiresIn !== null) jwt.setExpirationTime(options.expiresIn ?? '1h');
  return jwt.sign(new TextEncoder().encode(options.secret ?? TEST_JWT_SECRET));
}

let imeiCounter = 0;
/** A device id no other test uses. */
export function uniqueImei(): string {
  imeiCounter += 1;
  return `35${process.pid}${Date.now().toString().slice(-7)}${imeiCounter}`.slice(0, 32);
}

/** An IMEI as a tracker reports it and the device registry takes it: 15 digits, unique to this run. */
export function uniqueDeviceImei(): string {
  imeiCounter += 1;
  const pid = String(process.pid % 1000).padStart(3, '0');
  return `35${pid}${String(Date.now() % 1e7).padStart(7, '0')}${String(imeiCounter % 1000).padStart(3, '0')}`;
}

export function buildTrip(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    imei: uniqueImei(),
    // Within the last 11 days: never ahead of the clock (MAX_FUTURE_SKEW), and spread over several partitions.
    gpsTime: new Date(Date.now() - Math.floor(Math.random() * 1e9)).toISOString(),
    latitude: -6.2088,
    longitude: 106.8456,
    speed: 42.5,
    ignition: true,
    angle: 180,
    satellite: 9,
    door1: false,
    door2: true,
    temp: 4.5,
    fuel_percentage: 63.2,
    ...overrides,
  };
}

export function buildGroup(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { vehicleGroupName: `Cold chain ${randomUUID().slice(0, 8)}`, vehicleIds: [101, 102, 103], ...overrides };
}

let pool: Pool | undefined;
/** A pool on the run's database, for asserting stored rows. */
export function db(): Pool {
  pool ??= new Pool({ connectionString: testServers().databaseUrl, max: 3 });
  return pool;
}

/** How many trip locations are stored for these devices. */
export async function storedTripCount(imeis: readonly string[], pool: Pool = db()): Promise<number> {
  const { rows } = await pool.query<{ count: string }>('SELECT count(*) FROM trip_locations WHERE imei = ANY($1::text[])', [imeis]);
  return Number(rows[0]!.count);
}

export async function closeDb(): Promise<void> {
  await pool?.end();
  pool = undefined;
}

export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

export async function postForm(url: string, fields: Record<string, string> | string, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: typeof fields === 'string' ? fields : new URLSearchParams(fields).toString(),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

/**
 * The commands a stack's gateway has published to the writers, counted once everything it took before the
 * call is out: a valid trip sent now is answered only after it, and so whatever was queued before it, has
 * been published. That trip is not counted. `via` names another gateway on the stack's topics, and a
 * token it accepts.
 */
export async function commandsPublishedSettled(stack: Stack, via?: { url: string; authorization: string }): Promise<number> {
  const gateway = via ?? { url: stack.url, authorization: `Bearer ${await signToken()}` };
  const fence = await postJson(`${gateway.url}${TRIP_LOCATION_PATH}`, buildTrip(), { authorization: gateway.authorization });
  if (fence.status !== 200) throw new Error(`the trip sent to settle the publishes was answered ${fence.status}`);
  return (await commandsPublished(stack.prefix)) - 1;
}
