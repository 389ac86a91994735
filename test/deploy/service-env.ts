// What each deployable process reads from its environment, taken from the code that parses it, and the
// few variables a deployment may leave unset, each with the reason.
import { gatewayConfig, gatewayEnvNames } from '../../services/gateway/src/config';
import { eventProcessorEnvNames } from '../../services/event-processor/src/config';
import { groupWriterEnvNames } from '../../services/group-writer/src/config';
import { teltonikaEnvNames } from '../../services/teltonika/src/config';
import { createTopicsEnvNames } from '../../shared/src/kafka/create-topics-config';
import { commandStopDeadlineMs, DEFAULT_STOP_DEADLINE_MS } from '../../shared/src/stop-deadline';
import { tripWriterEnvNames } from '../../services/trip-writer/src/config';

export interface ProcessEnv {
  /** Service name in docker-compose.yml. */
  compose: string;
  /** The workload in the Kubernetes manifests. */
  kubernetes: { kind: 'Deployment' | 'Job'; name: string };
  reads: string[];
  /** Variables that may stay unset, by where, with why. */
  mayBeUnset: { compose?: Record<string, string>; kubernetes?: Record<string, string> };
}

/** Read by Node.js itself: the services' heap sizes (deploy/local/src/service-node-args.ts). */
const nodeRuntime = ['NODE_OPTIONS'];

/** Every deployment provisions its topics (the init service, the Job), so clients must never create one. */
const autoCreateTopics = {
  KAFKA_AUTO_CREATE_TOPICS:
    'its default, false, is the production value; only a broker that cannot create topics on request (the kcat mock) needs true',
};

export const processes: ProcessEnv[] = [
  {
    compose: 'gateway',
    kubernetes: { kind: 'Deployment', name: 'gateway' },
    reads: [...gatewayEnvNames, ...nodeRuntime],
    mayBeUnset: {
      compose: {
        GATEWAY_INSTANCE_ID:
          'must differ per instance; unset, each container derives one from its hostname, and compose cannot give replicas distinct values',
        ...autoCreateTopics,
      },
      kubernetes: autoCreateTopics,
    },
  },
  {
    compose: 'teltonika',
    kubernetes: { kind: 'Deployment', name: 'teltonika' },
    reads: [...teltonikaEnvNames, ...nodeRuntime],
    mayBeUnset: {
      compose: {
        TELTONIKA_INSTANCE_ID:
          'must differ per instance; unset, each container derives one from its hostname, and compose cannot give replicas distinct values',
        ...autoCreateTopics,
      },
      kubernetes: autoCreateTopics,
    },
  },
  {
    compose: 'trip-writer',
    kubernetes: { kind: 'Deployment', name: 'trip-writer' },
    reads: [...tripWriterEnvNames, ...nodeRuntime],
    mayBeUnset: { compose: autoCreateTopics, kubernetes: autoCreateTopics },
  },
  {
    compose: 'group-writer',
    kubernetes: { kind: 'Deployment', name: 'group-writer' },
    reads: [...groupWriterEnvNames, ...nodeRuntime],
    mayBeUnset: { compose: autoCreateTopics, kubernetes: autoCreateTopics },
  },
  {
    compose: 'event-processor',
    kubernetes: { kind: 'Deployment', name: 'event-processor' },
    reads: [...eventProcessorEnvNames, ...nodeRuntime],
    mayBeUnset: { compose: autoCreateTopics, kubernetes: autoCreateTopics },
  },
  {
    compose: 'migrate',
    kubernetes: { kind: 'Job', name: 'fleet-migrate' },
    // shared/src/cli/migrate.ts parses exactly these; it runs on import, so it cannot be imported here.
    reads: ['DATABASE_URL', 'LOG_LEVEL'],
    mayBeUnset: {},
  },
  {
    compose: 'init',
    kubernetes: { kind: 'Job', name: 'fleet-create-topics' },
    reads: createTopicsEnvNames,
    mayBeUnset: {},
  },
];

/** REPLY_TIMEOUT_MS as the gateway reads a deployment's value: its default when unset. */
export function gatewayReplyTimeoutMs(value: string | undefined): number {
  return gatewayConfig({ KAFKA_BROKERS: 'kafka:9092', ...(value === undefined ? {} : { REPLY_TIMEOUT_MS: value }) }).REPLY_TIMEOUT_MS;
}

/**
 * How long each long-running service may take to stop once signalled: the gateway drains in-flight
 * commands for REPLY_TIMEOUT_MS + 1 s, then closes its clients; the writers finish their batch and commit.
 */
export function stopDeadlinesMs(
  replyTimeoutMs: number,
): Record<'gateway' | 'teltonika' | 'trip-writer' | 'group-writer' | 'event-processor', number> {
  return {
    gateway: commandStopDeadlineMs(replyTimeoutMs),
    teltonika: commandStopDeadlineMs(replyTimeoutMs),
    'trip-writer': DEFAULT_STOP_DEADLINE_MS,
    'group-writer': DEFAULT_STOP_DEADLINE_MS,
    'event-processor': DEFAULT_STOP_DEADLINE_MS,
  };
}
