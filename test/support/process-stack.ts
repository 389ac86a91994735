// A stack of real service processes (gateway, trip-writers, group-writers, event processors) on the run's
// servers or a database of the test's own, each of which a test may kill, freeze or restart.
import { baseEnv, uniquePrefix } from './harness';
import { provisionTopics } from './kafka';
import { spawnService, type ServiceProcess } from './processes';
import { TRIP_LOCATION_PATH, VEHICLE_GROUP_PATH } from '../../services/gateway/src/http/routes';

export interface ProcessStack {
  /** The gateway running now (restartGateway replaces it). */
  gateway: ServiceProcess;
  writers: ServiceProcess[];
  groupWriters: ServiceProcess[];
  eventProcessors: ServiceProcess[];
  env: NodeJS.ProcessEnv;
  prefix: string;
  /** Where trip locations are posted, on the gateway running now. */
  readonly url: string;
  /** Where vehicle groups are posted, on the gateway running now. */
  readonly groupUrl: string;
  addWriter(): Promise<ServiceProcess>;
  addGroupWriter(): Promise<ServiceProcess>;
  addEventProcessor(): Promise<ServiceProcess>;
  /** Starts a new gateway in place of one that has ended (e.g. killed by the test). */
  restartGateway(): Promise<ServiceProcess>;
  stop(): Promise<void>;
}

export interface ProcessStackOptions {
  env?: Record<string, string>;
  /** For the trip-writers alone, over `env`. */
  writerEnv?: Record<string, string>;
  /** Leaves the consumer session at its deployed default instead of the broker's minimum. */
  deployedDefaults?: boolean;
  tripWriters?: number;
  groupWriters?: number;
  eventProcessors?: number;
}

/** A gateway and writers as separate processes, on topics of their own. */
export async function startProcessStack(label: string, options: ProcessStackOptions = {}): Promise<ProcessStack> {
  const prefix = uniquePrefix(label);
  const env = baseEnv(prefix, {
    LOG_LEVEL: 'info',
    // A killed writer's partitions stand still until the broker ends its session; the broker's minimum
    // keeps that to seconds (recoveryBoundSeconds).
    ...(options.deployedDefaults ? {} : { KAFKA_SESSION_TIMEOUT_MS: '6000' }),
    // One token posts a whole fleet's load and its retries: its subject's rate limit is off.
    RATE_LIMIT_SUBJECT_PER_SECOND: '0',
    ...options.env,
  });
  await provisionTopics(prefix, env.KAFKA_BROKERS!.split(','));
  const writerEnv = { ...env, ...options.writerEnv };
  // One after the other, as a deployment scales out: each writer is in the group before the next joins.
  const writers: ServiceProcess[] = [];
  for (let count = 0; count < (options.tripWriters ?? 1); count += 1) writers.push(await spawnService('trip-writer', writerEnv));
  const groupWriters: ServiceProcess[] = [];
  for (let count = 0; count < (options.groupWriters ?? 0); count += 1) groupWriters.push(await spawnService('group-writer', env));
  const eventProcessors: ServiceProcess[] = [];
  for (let count = 0; count < (options.eventProcessors ?? 0); count += 1) eventProcessors.push(await spawnService('event-processor', env));
  const stack: ProcessStack = {
    gateway: await spawnService('gateway', env),
    writers,
    groupWriters,
    eventProcessors,
    env,
    prefix,
    get url() {
      return `${stack.gateway.url}${TRIP_LOCATION_PATH}`;
    },
    get groupUrl() {
      return `${stack.gateway.url}${VEHICLE_GROUP_PATH}`;
    },
    async addWriter() {
      const writer = await spawnService('trip-writer', writerEnv);
      writers.push(writer);
      return writer;
    },
    async addGroupWriter() {
      const writer = await spawnService('group-writer', env);
      groupWriters.push(writer);
      return writer;
    },
    async addEventProcessor() {
      const processor = await spawnService('event-processor', env);
      eventProcessors.push(processor);
      return processor;
    },
    async restartGateway() {
      stack.gateway = await spawnService('gateway', env);
      return stack.gateway;
    },
    async stop() {
      await stack.gateway.stop();
      await Promise.allSettled([...writers, ...groupWriters, ...eventProcessors].map((service) => service.stop()));
    },
  };
  return stack;
}
