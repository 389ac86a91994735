// `npm start`: the whole stack on one machine, as in production: migrations, then the gateway, the
// trip-writer and the group-writer as three processes. Without KAFKA_BROKERS it starts an in-memory
// development broker. Ctrl-C (or SIGTERM) stops every process it started, broker included.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import {
  ConfigError,
  createLogger,
  devBrokerClientEnv,
  KCAT_INSTALL_HINT,
  kcatAvailable,
  loadConfig,
  logLevel,
  migrate,
  postgresUrl,
  redactUrl,
  startDevBroker,
  type DevBroker,
} from '@fleet/shared';
import { z } from 'zod';
import { devCredential, repoRoot } from './dev-secret';

const services = ['gateway', 'trip-writer', 'group-writer'] as const;
/** Each writer serves its metrics on a port of its own; the gateway serves them on PORT. */
const metricsPortVariable: Record<string, string> = {
  'trip-writer': 'TRIP_WRITER_METRICS_PORT',
  'group-writer': 'GROUP_WRITER_METRICS_PORT',
};
const STOP_GRACE_MS = 8000;
/** As in the image (deploy/docker/Dockerfile): a young generation large enough for a request's garbage. */
const SERVICE_NODE_ARGS = ['--max-semi-space-size=16'];

const launcherEnv = z.object({
  DATABASE_URL: postgresUrl,
  LOG_LEVEL: logLevel,
  KAFKA_BROKERS: z.string().optional(),
  PORT: z.coerce.number().int().default(8080),
  TRIP_WRITER_METRICS_PORT: z.coerce.number().int().min(0).default(9464),
  GROUP_WRITER_METRICS_PORT: z.coerce.number().int().min(0).default(9465),
  /** Brokers in the development mock cluster; each one is polled by every consumer. */
  DEV_KAFKA_BROKER_COUNT: z.coerce.number().int().min(1).max(5).default(1),
  /** Extra Node.js arguments for the three services, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile them. */
  STACK_NODE_ARGS: z
    .string()
    .default('')
    .transform((value) => value.split(/\s+/).filter(Boolean)),
  NODE_ENV: z.string().default('development'),
});

const logger = createLogger('stack');

async function waitForReady(port: number, children: Map<string, ChildProcess>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && children.size === services.length) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/readyz`);
      if (response.ok) {
        logger.info(`stack is ready: http://localhost:${port} (GET /readyz is 200)`);
        return;
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Runs a one-shot step (a CLI of the project) to completion; true when it exited 0. */
function runOnce(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: repoRoot, env, stdio: ['ignore', 'ignore', 'inherit'] });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => {
      if (code !== 0) logger.warn({ code }, `${name} step failed`);
      resolve(code === 0);
    });
  });
}

async function main(): Promise<void> {
  let config: z.output<typeof launcherEnv>;
  try {
    config = loadConfig(launcherEnv);
  } catch (error) {
    logger.fatal((error as ConfigError).message);
    process.exit(1);
  }
  const env: NodeJS.ProcessEnv = { ...process.env };

  let broker: DevBroker | undefined;
  if (!config.KAFKA_BROKERS) {
    if (!kcatAvailable()) {
      logger.fatal(KCAT_INSTALL_HINT);
      process.exit(1);
    }
    broker = await startDevBroker({ brokerCount: config.DEV_KAFKA_BROKER_COUNT });
    env.KAFKA_BROKERS = broker.brokers.join(',');
    for (const [name, value] of Object.entries(devBrokerClientEnv)) env[name] ??= value;
    logger.warn(
      { brokers: broker.brokers },
      'KAFKA_BROKERS is unset: started an in-memory DEVELOPMENT broker (librdkafka mock cluster via kcat). ' +
        'It keeps nothing on disk and everything in it is lost when the stack stops. Set KAFKA_BROKERS for a real Kafka.',
    );
  }

  const development = config.NODE_ENV !== 'production';
  if (development && !env.JWT_SECRET && !env.JWT_PUBLIC_KEY && !env.JWKS_URL) {
    const secret = devCredential('jwt-secret');
    env.JWT_SECRET = secret.value;
    logger.warn(
      `no JWT key configured: ${secret.created ? 'generated' : 'using'} a development secret stored in ${secret.file}; ` +
        'mint a token with `npm run dev-token`',
    );
  }
  if (development && !env.API_KEYS) {
    const key = devCredential('api-key');
    env.API_KEYS = key.value;
    logger.warn(`no API_KEYS configured: category reads accept the development key stored in ${key.file}`);
  }

  const stopBroker = () => broker?.stop();
  try {
    await migrate(config.DATABASE_URL, createLogger('migrate', config.LOG_LEVEL));
  } catch (error) {
    logger.fatal(`migrations failed on ${redactUrl(config.DATABASE_URL)}: ${(error as Error).message}`);
    await stopBroker();
    process.exit(1);
  }

  if (development) {
    // Example categories, so a category read answers on a fresh machine; production data comes from
    // `npm run categories -- import`, never from migrations.
    const seeded = await runOnce('categories', ['services/gateway/dist/cli/categories.js', 'import', 'deploy/local/seed/categories.json'], env);
    if (!seeded) logger.warn('could not import the example categories; the stack starts without them');
  }

  const children = new Map<string, ChildProcess>();
  let stopping = false;
  let exitCode = 0;

  /** Sends SIGTERM and waits for the exit, or SIGKILLs after the grace period. */
  const stopChild = (child: ChildProcess | undefined) =>
    new Promise<void>((resolve) => {
      if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
      const forced = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      child.once('exit', () => {
        clearTimeout(forced);
        resolve();
      });
      child.kill('SIGTERM');
    });

  const stopAll = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'stopping the stack');
    // The gateway first: its in-flight requests still get their replies while the writers run.
    await stopChild(children.get('gateway'));
    await Promise.all([stopChild(children.get('trip-writer')), stopChild(children.get('group-writer'))]);
    await stopBroker();
    logger.info('stack stopped');
    process.exit(exitCode);
  };

  for (const service of services) {
    const metricsVariable = metricsPortVariable[service];
    const metricsPort = metricsVariable ? { METRICS_PORT: String(config[metricsVariable as keyof typeof config]) } : {};
    const child = spawn(process.execPath, [...SERVICE_NODE_ARGS, ...config.STACK_NODE_ARGS, path.join(repoRoot, 'services', service, 'dist', 'main.js')], {
      env: { ...env, ...metricsPort },
      // A process group of its own, so a terminal's Ctrl-C reaches only this launcher, which stops
      // the services in order; the IPC channel tells a service when the launcher itself is gone.
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    children.set(service, child);
    child.once('exit', (code, signal) => {
      children.delete(service);
      if (!stopping) {
        logger.error({ code, signal }, `${service} exited unexpectedly; stopping the stack`);
        exitCode = 1;
        void stopAll(`${service} exited`);
      }
    });
  }
  process.on('SIGINT', () => void stopAll('SIGINT'));
  process.on('SIGTERM', () => void stopAll('SIGTERM'));
  await waitForReady(config.PORT, children);
}

void main();
