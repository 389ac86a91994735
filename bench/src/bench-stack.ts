// The stack a bench run measures, started as `npm start` starts it (deploy/local's launcher, separate
// processes) on free ports, with the run's API key and token secret, its log passed on as it comes.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '@fleet/local-stack/local-ports';
import type { BenchOptions } from './bench-types';
import { repoRoot, waitReady } from './load-driver';

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
