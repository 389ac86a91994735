// The replicated shape is declared in three places: the local cluster (`KAFKA_BROKER_COUNT=3`), compose
// and the Kubernetes production overlay. They must agree on three brokers, three replicas and two in sync,
// with the topic provisioning code that all three run.
import { CLUSTER_NODES, clusterFailover, clusterReplication } from '../../deploy/local/src/kafka-cluster';
import { minInsyncReplicas, REPLICATED } from '../../shared/src/kafka/topics';
import { composeEnv, findObject, literalEnvValue, loadCompose, overlayDir, renderKustomization } from './deploy-files';
import type { IContainer } from 'kubernetes-models/v1';

const compose = loadCompose();
const kafkaNodes = Object.keys(compose.services).filter((name) => /^kafka-\d+$/.test(name));
const production = renderKustomization(overlayDir('production'));

/** broker property `a.b.c` as the apache/kafka image reads it from the environment: KAFKA_A_B_C. */
function imageVariable(property: string): string {
  return `KAFKA_${property.toUpperCase().replace(/\./g, '_')}`;
}

function brokerList(value: string | undefined): string[] {
  return (value ?? '').split(',').filter(Boolean);
}

describe('the replicated Kafka is the same in every place that declares it', () => {
  test('the provisioning code gives three replicas two in sync, and one replica one', () => {
    expect(REPLICATED).toEqual({ replicationFactor: 3, minInsyncReplicas: 2 });
    expect(minInsyncReplicas(3)).toBe(2);
    expect(minInsyncReplicas(1)).toBe(1);
  });

  test('the local cluster runs three nodes with the provisioning code’s replication', () => {
    expect(CLUSTER_NODES).toBe(REPLICATED.replicationFactor);
    expect(clusterReplication['default.replication.factor']).toBe(REPLICATED.replicationFactor);
    expect(clusterReplication['min.insync.replicas']).toBe(minInsyncReplicas(REPLICATED.replicationFactor));
  });

  test('compose runs three KRaft nodes, each a voter, with the local cluster’s replication and failover settings', () => {
    expect(kafkaNodes).toHaveLength(CLUSTER_NODES);
    const ids = kafkaNodes.map((name) => composeEnv(compose.services[name]!).get('KAFKA_NODE_ID'));
    expect(new Set(ids).size).toBe(CLUSTER_NODES);
    for (const name of kafkaNodes) {
      const env = composeEnv(compose.services[name]!);
      const voters = brokerList(env.get('KAFKA_CONTROLLER_QUORUM_VOTERS'));
      expect({ name, voters: voters.length }).toEqual({ name, voters: CLUSTER_NODES });
      expect(voters).toContain(`${env.get('KAFKA_NODE_ID')}@${name}:9093`);
      expect(env.get('KAFKA_ADVERTISED_LISTENERS')).toBe(`PLAINTEXT://${name}:9092`);
      for (const [property, value] of Object.entries({ ...clusterReplication, ...clusterFailover })) {
        expect({ name, property, value: env.get(imageVariable(property)) }).toEqual({ name, property, value: String(value) });
      }
    }
  });

  test('compose’s services bootstrap from all three brokers and provision three replicas', () => {
    const expected = kafkaNodes.map((name) => `${name}:9092`).sort();
    for (const [name, service] of Object.entries(compose.services)) {
      const brokers = composeEnv(service).get('KAFKA_BROKERS');
      if (brokers !== undefined) expect({ name, brokers: brokerList(brokers).sort() }).toEqual({ name, brokers: expected });
    }
    expect(composeEnv(compose.services.init!).get('TOPIC_REPLICATION_FACTOR')).toBe(String(REPLICATED.replicationFactor));
  });

  test('Kubernetes production bootstraps from three brokers and provisions three replicas', () => {
    // kustomize's generator suffixes the ConfigMap's name with a hash of its content.
    const config = production.find((object) => object.kind === 'ConfigMap' && object.metadata.name.startsWith('fleet-config-'));
    expect(brokerList(config?.data?.KAFKA_BROKERS)).toHaveLength(REPLICATED.replicationFactor);
    const job = findObject(production, 'Job', 'fleet-create-topics');
    const container = job.spec.template.spec.containers[0] as IContainer;
    expect(literalEnvValue(container, production, 'TOPIC_REPLICATION_FACTOR')).toBe(String(REPLICATED.replicationFactor));
  });
});
