// The stack a bench run measures, started as `npm start` starts it (deploy/local's launcher, separate
// processes) on free ports, with the run's API key and token secret, its log passed on as it comes.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { dropDatabase } from '@fleet/shared/db/pool';
import { freePort, freePortRun } from '@fleet/local-stack/local-ports';
import { benchToken } from './bench-requests';
import type { BenchOptions } from './bench-types';
import { repoRoot, waitReady, type LoadRequest } from './load-driver';
import { listenerPid } from './process-cpu';

/** The broker as the launcher named it, and its JVM's pid when it started or found the local Apache Kafka. */
export interface BenchBroker {
  name: string;
  pid: number | null;
}

export interface BenchStack {
  launcher: ChildProcess;
  gatewayUrl: string;
  /** The stack's Teltonika listener. */
  teltonikaPort: number;
  broker: BenchBroker;
}

/** Starts the stack and resolves once its gateway is ready; the launcher joins `stopList`. */
export async function startBenchStack(
  options: BenchOptions,
  { apiKey, jwtSecret }: { apiKey: string; jwtSecret: string },
  stopList: ChildProcess[],
): Promise<BenchStack> {
  const port = await freePort();
  const teltonikaPort = await freePort();
  const launcher = spawn(process.execPath, [path.join(repoRoot, 'deploy/local/dist/start-stack.js')], {
    env: {
      ...process.env,
      PORT: String(port),
      TRIP_WRITER_METRICS_PORT: '0',
      GROUP_WRITER_METRICS_PORT: '0',
      EVENT_PROCESSOR_METRICS_PORT: '0',
      TELTONIKA_PORT: String(teltonikaPort),
      TELTONIKA_METRICS_PORT: '0',
      DATABASE_URL: options.databaseUrl,
      KAFKA_TOPIC_PREFIX: `bench-${Date.now()}`,
      CACHE_KEY_PREFIX: `bench-${Date.now()}:`,
      LOG_LEVEL: 'warn',
      API_KEYS: apiKey,
      JWT_SECRET: jwtSecret,
      NODE_ENV: 'production',
      ...(options.kafkaBrokers ? { KAFKA_BROKERS: options.kafkaBrokers } : {}),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  stopList.push(launcher);
  const broker: BenchBroker = { name: 'not reported by the launcher', pid: null };
  // The launcher's log says which broker it runs; its lines are passed on as they come.
  createInterface({ input: launcher.stdout! }).on('line', (line) => {
    process.stdout.write(`${line}\n`);
    const entry = (() => {
      try {
        return JSON.parse(line) as { msg?: unknown; pid?: unknown };
      } catch {
        return {};
      }
    })();
    const msg = String(entry.msg ?? '');
    if (msg.startsWith('broker: ')) {
      broker.name = msg.slice('broker: '.length);
      if (typeof entry.pid === 'number') broker.pid = entry.pid;
    }
  });
  const gatewayUrl = `http://127.0.0.1:${port}`;
  await waitReady(gatewayUrl, launcher);
  return { launcher, gatewayUrl, teltonikaPort, broker };
}

/** A stack of the bench's own, as the paced scenarios (quiet fleet, events) start it. */
export interface PacedStack {
  launcher: ChildProcess;
  gatewayUrl: string;
  /** The token secret the stack verifies, for the scenario's tokens. */
  jwtSecret: string;
  stop(): Promise<void>;
}

/**
 * Starts the launcher on `port` with the ports and settings in `env`, on `databaseUrl` (dropped first, so
 * created afresh by the launcher's migrations), topics of its
 * own (`label`) and the rate limits off (they count a fleet's positions, not one load's), and resolves
 * once its gateway is ready.
 */
export async function startPacedStack(label: string, port: number, databaseUrl: string, env: Record<string, string>): Promise<PacedStack> {
  // A database of its own, new each time: devices left by an earlier run fall silent ten minutes later,
  // and the event processor marking thousands of them offline is a load of its own in the figures.
  if (!new URL(databaseUrl).pathname.includes('bench')) throw new Error(`${databaseUrl} is not a bench database; it would be dropped`);
  await dropDatabase(databaseUrl);
  const jwtSecret = randomBytes(32).toString('base64url');
  const launcher = spawn(process.execPath, [path.join(repoRoot, 'deploy/local/dist/start-stack.js')], {
    env: {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      KAFKA_TOPIC_PREFIX: `${label}-${Date.now()}`,
      CACHE_KEY_PREFIX: `${label}-${Date.now()}:`,
      LOG_LEVEL: 'warn',
      JWT_SECRET: jwtSecret,
      API_KEYS: randomBytes(12).toString('hex'),
      RATE_LIMIT_DEVICE_PER_MINUTE: '0',
      RATE_LIMIT_SUBJECT_PER_SECOND: '0',
      NODE_ENV: 'production',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // Its log is read and dropped: the bench's own lines are the ones to follow.
  launcher.stdout!.resume();
  const stop = () =>
    new Promise<void>((resolve) => {
      if (launcher.exitCode !== null) return resolve();
      launcher.once('exit', () => resolve());
      launcher.kill('SIGTERM');
    });
  const gatewayUrl = `http://127.0.0.1:${port}`;
  try {
    await waitReady(gatewayUrl, launcher, 120_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { launcher, gatewayUrl, jwtSecret, stop };
}

/** The processes of a fleet stack, by part, for the CPU figures; the broker's and PostgreSQL's are added by the scenario. */
export type ServiceSources = Record<'gateway' | 'trip-writer' | 'group-writer' | 'teltonika' | 'event-processor', () => number[]>;

export interface FleetStack extends PacedStack {
  /** A trip create from a device of its own each time, as a fleet reports, with a token the stack accepts. */
  uniqueCreate: LoadRequest;
  services: ServiceSources;
}

/**
 * The whole stack as `npm start` runs it (Teltonika listener and event processor included) on six
 * consecutive free ports, on `brokers`, with a token and a create request of its own. `label` names its
 * topics and prefixes its devices' IMEIs.
 */
export async function startFleetStack(label: string, databaseUrl: string, brokers: string): Promise<FleetStack> {
  const base = await freePortRun(6);
  const [port, tripMetrics, groupMetrics, teltonikaPort, teltonikaMetrics, eventMetrics] = [
    base,
    base + 1,
    base + 2,
    base + 3,
    base + 4,
    base + 5,
  ];
  const stack = await startPacedStack(label, port, databaseUrl, {
    KAFKA_BROKERS: brokers,
    TRIP_WRITER_METRICS_PORT: String(tripMetrics),
    GROUP_WRITER_METRICS_PORT: String(groupMetrics),
    TELTONIKA_PORT: String(teltonikaPort),
    TELTONIKA_METRICS_PORT: String(teltonikaMetrics),
    EVENT_PROCESSOR_METRICS_PORT: String(eventMetrics),
  });
  const token = await benchToken(label, stack.jwtSecret);
  let sequence = 0;
  const uniqueCreate: LoadRequest = {
    method: 'POST',
    path: '/fleet/api/v1/trip-location',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: () => {
      sequence += 1;
      return JSON.stringify({
        imei: `${label}${process.pid}${sequence}`,
        gpsTime: new Date().toISOString(),
        latitude: -6.2,
        longitude: 106.8,
        speed: 40,
        ignition: true,
      });
    },
  };
  const pid = (found: number | null) => (found === null ? [] : [found]);
  const services: ServiceSources = {
    gateway: () => pid(listenerPid(port)),
    'trip-writer': () => pid(listenerPid(tripMetrics)),
    'group-writer': () => pid(listenerPid(groupMetrics)),
    teltonika: () => pid(listenerPid(teltonikaMetrics)),
    'event-processor': () => pid(listenerPid(eventMetrics)),
  };
  return { ...stack, uniqueCreate, services };
}
