// What each deployable process reads from its environment, taken from the code that parses it, and the
// few variables a deployment may leave unset, each with the reason.
import { gatewayEnvNames } from '../../services/gateway/src/config';
import { writerEnvNames } from '../../shared/src/writer-service';
import { topicScriptEnv } from './deploy-files';

export interface ProcessEnv {
  /** Service name in docker-compose.yml. */
  compose: string;
  /** The workload in the Kubernetes manifests. */
  kubernetes: { kind: 'Deployment' | 'Job'; name: string };
  reads: string[];
  /** Variables that may stay unset, by where, with why. */
  mayBeUnset: { compose?: Record<string, string>; kubernetes?: Record<string, string> };
}

const topicScriptVariables = topicScriptEnv();

export const processes: ProcessEnv[] = [
  {
    compose: 'gateway',
    kubernetes: { kind: 'Deployment', name: 'gateway' },
    reads: gatewayEnvNames,
    mayBeUnset: {
      compose: {
        GATEWAY_INSTANCE_ID:
          'must differ per instance; unset, each container derives one from its hostname, and compose cannot give replicas distinct values',
      },
    },
  },
  {
    compose: 'trip-writer',
    kubernetes: { kind: 'Deployment', name: 'trip-writer' },
    reads: writerEnvNames,
    mayBeUnset: {},
  },
  {
    compose: 'group-writer',
    kubernetes: { kind: 'Deployment', name: 'group-writer' },
    reads: writerEnvNames,
    mayBeUnset: {},
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
    reads: [...topicScriptVariables.keys()],
    mayBeUnset: {
      compose: { KAFKA_BIN: 'its default is where the apache/kafka image keeps the Kafka tools' },
      kubernetes: { KAFKA_BIN: 'its default is where the apache/kafka image keeps the Kafka tools' },
    },
  },
];
