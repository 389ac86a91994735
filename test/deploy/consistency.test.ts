// What the Dockerfile, docker-compose.yml, the Kubernetes manifests and the code must agree on: the
// image, the ports, the commands, the Kafka version, and the topics the services derive from their prefix.
import type { IContainer } from 'kubernetes-models/v1';
import { KAFKA_VERSION } from '../../deploy/local/src/apache-kafka';
import { gatewayConfig } from '../../services/gateway/src/config';
import { topicSpecs, topicsFor } from '../../shared/src/kafka/topics';
import { writerConfig } from '../../shared/src/writer-service';
import {
  appImage,
  containerEnv,
  createTopicsCommand,
  composeEnv,
  dockerfilePath,
  dockerfileStages,
  findObject,
  imageParts,
  instructionWords,
  interpolate,
  k8sBaseDir,
  literalEnvValue,
  loadCompose,
  readRepoFile,
  overlayDir,
  overlayNames,
  renderKustomization,
  workloads,
} from './deploy-files';
import { processes } from './service-env';

const runtimeStage = dockerfileStages(readRepoFile(dockerfilePath)).find((stage) => stage.name === 'runtime')!;
const compose = loadCompose();
const k8s = renderKustomization(k8sBaseDir);
/** Keys of the Secrets the base documents, for renders that leave the real Secret to the cluster. */
const documentedSecrets = new Map(
  k8s.filter((o) => o.kind === 'Secret').map((secret) => [secret.metadata.name, Object.keys({ ...secret.data, ...secret.stringData })]),
);
const renders = [{ name: 'base', objects: k8s }, ...overlayNames.map((name) => ({ name, objects: renderKustomization(overlayDir(name)) }))];

function k8sContainer(kind: string, name: string): IContainer {
  return findObject(k8s, kind, name).spec.template.spec.containers[0] as IContainer;
}

function exposedPorts(): number[] {
  return runtimeStage.instructions
    .filter((i) => i.getKeyword() === 'EXPOSE')
    .flatMap(instructionWords)
    .map((port) => Number(port.split('/')[0]));
}

function label(name: string): string | undefined {
  const labels = runtimeStage.instructions.filter((i) => i.getKeyword() === 'LABEL').flatMap(instructionWords);
  const entry = labels.find((word) => word.startsWith(`${name}=`));
  return entry?.slice(name.length + 1).replace(/^"(.*)"$/, '$1');
}

/** The port in a healthcheck command that fetches http://127.0.0.1:PORT/... */
function healthcheckPort(test: string[] | string | undefined): number | undefined {
  const match = /http:\/\/127\.0\.0\.1:(\d+)\//.exec([test ?? []].flat().join(' '));
  return match ? Number(match[1]) : undefined;
}

describe('deployment files agree', () => {
  test('compose, Kubernetes and the image label name the same application image', () => {
    expect(label('org.opencontainers.image.title')).toBe(appImage);
    for (const { compose: name } of processes) {
      expect(imageParts(interpolate(compose.services[name]!.image!)).name).toBe(appImage);
    }
    for (const { kubernetes } of processes) {
      expect(imageParts(k8sContainer(kubernetes.kind, kubernetes.name).image!).name).toBe(appImage);
    }
  });

  test('compose and Kubernetes run every process with the same command', () => {
    for (const { compose: service, kubernetes } of processes) {
      expect({ service, command: k8sContainer(kubernetes.kind, kubernetes.name).command }).toEqual({
        service,
        command: compose.services[service]!.command,
      });
    }
  });

  test('the gateway port agrees across the Dockerfile, compose and Kubernetes', () => {
    const gateway = compose.services.gateway!;
    const port = Number(composeEnv(gateway).get('PORT'));
    expect(exposedPorts()).toContain(port);
    expect(gateway.expose?.map(Number)).toEqual([port]);
    expect(healthcheckPort(gateway.healthcheck?.test)).toBe(port);

    const container = k8sContainer('Deployment', 'gateway');
    expect(Number(literalEnvValue(container, k8s, 'PORT'))).toBe(port);
    expect(container.ports?.map((p) => p.containerPort)).toEqual([port]);
  });

  test('the writers metrics port agrees across the Dockerfile, compose and Kubernetes', () => {
    for (const writer of ['trip-writer', 'group-writer']) {
      const service = compose.services[writer]!;
      const port = Number(composeEnv(service).get('METRICS_PORT'));
      expect(exposedPorts()).toContain(port);
      expect(service.expose?.map(Number)).toEqual([port]);
      expect(healthcheckPort(service.healthcheck?.test)).toBe(port);

      const container = k8sContainer('Deployment', writer);
      expect(Number(literalEnvValue(container, k8s, 'METRICS_PORT'))).toBe(port);
      expect(container.ports?.map((p) => p.containerPort)).toEqual([port]);
    }
  });

  test('compose and Kubernetes use the same topic prefix and consumer groups', () => {
    for (const name of ['gateway', 'trip-writer', 'group-writer']) {
      const container = k8sContainer('Deployment', name);
      expect(literalEnvValue(container, k8s, 'KAFKA_TOPIC_PREFIX')).toBe(composeEnv(compose.services[name]!).get('KAFKA_TOPIC_PREFIX'));
    }
    for (const writer of ['trip-writer', 'group-writer']) {
      expect(literalEnvValue(k8sContainer('Deployment', writer), k8s, 'WRITER_GROUP_ID')).toBe(
        composeEnv(compose.services[writer]!).get('WRITER_GROUP_ID'),
      );
    }
  });

  test('compose and Kubernetes create the topics with the create-topics command, whose table names every topic', () => {
    expect(compose.services.init!.command).toEqual(createTopicsCommand);
    expect(k8sContainer('Job', 'fleet-create-topics').command).toEqual(createTopicsCommand);
    const prefix = composeEnv(compose.services.init!).get('KAFKA_TOPIC_PREFIX')!;
    const provisioned = topicSpecs.map((spec) => topicsFor(prefix)[spec.name]);
    expect([...provisioned].sort()).toEqual(Object.values(topicsFor(prefix)).sort());
    for (const spec of topicSpecs) {
      expect({ topic: spec.name, partitions: Number.isInteger(spec.partitions) && spec.partitions > 0 }).toEqual({
        topic: spec.name,
        partitions: true,
      });
      expect({ topic: spec.name, retention: Number.isInteger(spec.retentionMs) && spec.retentionMs > 0 }).toEqual({
        topic: spec.name,
        retention: true,
      });
    }
    expect(topicSpecs.find((spec) => spec.name === 'tripLocations')?.partitions).toBe(12);
  });

  test('every apache/kafka image is the version the local broker and the tests run', () => {
    const composeImages = Object.values(compose.services).map((service) => interpolate(service.image ?? ''));
    const k8sImages = renders.flatMap(({ objects }) => workloads(objects).flatMap(({ pod }) => pod.containers.map((c) => c.image ?? '')));
    const kafkaImages = [...composeImages, ...k8sImages].filter((image) => image.replace(/:.*$/, '') === 'apache/kafka');
    expect(kafkaImages.length).toBeGreaterThan(0);
    expect(new Set(kafkaImages)).toEqual(new Set([`apache/kafka:${KAFKA_VERSION}`]));
  });

  test('no deployment lets a client create a topic: KAFKA_AUTO_CREATE_TOPICS is unset, its default false, or false', () => {
    expect(gatewayConfig({ KAFKA_BROKERS: 'kafka:9092' }).KAFKA_AUTO_CREATE_TOPICS).toBe(false);
    expect(writerConfig({ KAFKA_BROKERS: 'kafka:9092' }).KAFKA_AUTO_CREATE_TOPICS).toBe(false);
    const allowed = [undefined, 'false'];
    for (const [name, service] of Object.entries(compose.services)) {
      const value = composeEnv(service).get('KAFKA_AUTO_CREATE_TOPICS');
      expect({ name, value, allowed: allowed.includes(value) }).toEqual({ name, value, allowed: true });
    }
    for (const { name: render, objects } of renders) {
      for (const { owner, pod } of workloads(objects)) {
        for (const c of pod.containers) {
          const where = `${render} ${owner.metadata.name}/${c.name}`;
          const set = containerEnv(c, objects, documentedSecrets).has('KAFKA_AUTO_CREATE_TOPICS');
          const value = set ? literalEnvValue(c, objects, 'KAFKA_AUTO_CREATE_TOPICS') : undefined;
          expect({ where, value, allowed: !set || value === 'false' }).toEqual({ where, value, allowed: true });
        }
      }
    }
  });
});
