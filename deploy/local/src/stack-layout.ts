// What `npm start` runs, from its environment: the launcher's settings, the processes (replicas
// included) with the ports each listens on, and the check that those ports are free before any starts.
import { ConfigError, logLevel, nonNegativeInt, positiveInt, postgresUrl, topicPrefix } from '@fleet/shared/config';
import { integer } from '@fleet/shared/schemas/checks';
import { z } from 'zod';
import { assertPortBindable } from './local-ports';
import type { ServiceName } from './service-node-args';

export type Service = ServiceName;

/** One process the launcher runs and supervises. */
export interface Instance {
  /** The service's name, with its index when the launcher runs several of it (gateway-1). */
  name: string;
  service: Service;
  /** The port it listens on (a gateway's HTTP, a writer's or the Teltonika listener's metrics); 0 picks a free one. */
  port: number;
  /** The variable the port comes from, for the line that says it is taken. */
  portVariable: string;
  /** Another port it listens on (the Teltonika listener's for devices), checked the same way. */
  devicePort?: number;
}
export const launcherEnv = z.object({
  DATABASE_URL: postgresUrl,
  LOG_LEVEL: logLevel,
  KAFKA_BROKERS: z.string().optional(),
  KAFKA_PORT: z.coerce.number().check(integer()).min(1).max(65530).default(9092),
  /** 1: a single local node; 3: a replicated local cluster of three (`KAFKA_BROKER_COUNT=3 npm run kafka:up`). */
  KAFKA_BROKER_COUNT: z.enum(['1', '3']).default('1').transform(Number),
  KAFKA_TOPIC_PREFIX: topicPrefix,
  PORT: z.coerce.number().check(integer()).default(8080),
  /** Gateways to run, gateway i on PORT + i. */
  GATEWAY_REPLICAS: positiveInt(1),
  /**
   * Trip-writers to run, members of one consumer group; writer i serves its metrics on
   * TRIP_WRITER_METRICS_PORT + i, a range of its own (9500 on) clear of the other services' ports.
   */
  TRIP_WRITER_REPLICAS: positiveInt(1),
  TRIP_WRITER_METRICS_PORT: z.coerce.number().check(integer()).min(0).default(9500),
  GROUP_WRITER_METRICS_PORT: z.coerce.number().check(integer()).min(0).default(9465),
  /**
   * Event processors to run, members of one consumer group on the committed positions; processor i
   * serves its metrics on EVENT_PROCESSOR_METRICS_PORT + i, a range of its own (9600 on). 0 leaves the
   * event layer out: positions are stored and streamed, and no event is raised.
   */
  EVENT_PROCESSOR_REPLICAS: nonNegativeInt(1),
  EVENT_PROCESSOR_METRICS_PORT: z.coerce.number().check(integer()).min(0).default(9600),
  /** The Teltonika listener's TCP port for devices; 0 leaves the listener out. */
  TELTONIKA_PORT: z.coerce.number().check(integer()).min(0).max(65535).default(5027),
  TELTONIKA_METRICS_PORT: z.coerce.number().check(integer()).min(0).default(9466),
  /** The gateway drains for up to this plus a second on stop; the grace period is derived from it. */
  REPLY_TIMEOUT_MS: positiveInt(10_000),
  /** Extra Node.js arguments for every service, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile them. */
  STACK_NODE_ARGS: z
    .string()
    .default('')
    .transform((value) => value.split(/\s+/).filter(Boolean)),
  NODE_ENV: z.string().default('development'),
});

export type LauncherConfig = z.output<typeof launcherEnv>;

/** The processes to run: the gateways first, as they are stopped first. */
export function instancesOf(config: LauncherConfig): Instance[] {
  const replicas = (service: Service, count: number, base: number, variable: string): Instance[] =>
    Array.from({ length: count }, (_, index) => ({
      name: count === 1 ? service : `${service}-${index}`,
      service,
      port: base === 0 ? 0 : base + index,
      portVariable: index === 0 ? variable : `${variable}+${index}`,
    }));
  return [
    ...replicas('gateway', config.GATEWAY_REPLICAS, config.PORT, 'PORT'),
    ...replicas('trip-writer', config.TRIP_WRITER_REPLICAS, config.TRIP_WRITER_METRICS_PORT, 'TRIP_WRITER_METRICS_PORT'),
    ...replicas('group-writer', 1, config.GROUP_WRITER_METRICS_PORT, 'GROUP_WRITER_METRICS_PORT'),
    ...replicas('event-processor', config.EVENT_PROCESSOR_REPLICAS, config.EVENT_PROCESSOR_METRICS_PORT, 'EVENT_PROCESSOR_METRICS_PORT'),
    ...(config.TELTONIKA_PORT === 0
      ? []
      : replicas('teltonika', 1, config.TELTONIKA_METRICS_PORT, 'TELTONIKA_METRICS_PORT').map((instance) => ({
          ...instance,
          devicePort: config.TELTONIKA_PORT,
        }))),
  ];
}

/**
 * The ports the services will listen on, checked before anything starts: a second `npm start`, or any
 * server on PORT, is refused with one line instead of services crash-looping on EADDRINUSE while the
 * launcher probes the other stack's gateway.
 */
export async function assertServicePortsFree(instances: readonly Instance[]): Promise<void> {
  const ports = instances.flatMap(({ port, portVariable, devicePort }) => [
    { port, portVariable },
    ...(devicePort === undefined ? [] : [{ port: devicePort, portVariable: 'TELTONIKA_PORT' }]),
  ]);
  const claimed = new Map<number, string>();
  for (const { port, portVariable } of ports) {
    if (port === 0) continue;
    const other = claimed.get(port);
    if (other !== undefined)
      throw new ConfigError(`${portVariable} and ${other} are both port ${port}: give each service a port of its own`);
    claimed.set(port, portVariable);
  }
  for (const { port, portVariable } of ports) {
    if (port === 0) continue;
    try {
      // Every interface, as the services listen.
      await assertPortBindable(port, '::');
    } catch (error) {
      throw new ConfigError(`${portVariable}=${port} is in use by another process (another stack?): ${(error as Error).message}`);
    }
  }
}
