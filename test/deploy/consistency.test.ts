// What the Dockerfile, docker-compose.yml and the Kubernetes manifests must agree on: the image, the
// ports, the commands, and the topics the services derive from their prefix.
import type { IContainer } from 'kubernetes-models/v1';
import { topicsFor } from '../../shared/src/kafka/topics';
import {
  appImage,
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
  renderKustomization,
  topicScriptPath,
  topicTable,
} from './deploy-files';
import { processes } from './service-env';

const runtimeStage = dockerfileStages(readRepoFile(dockerfilePath)).at(-1)!;
const compose = loadCompose();
const k8s = renderKustomization(k8sBaseDir);

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
    for (const name of ['gateway', 'trip-writer', 'group-writer', 'migrate']) {
      expect(imageParts(interpolate(compose.services[name]!.image!)).name).toBe(appImage);
    }
    for (const { kubernetes } of processes.filter((p) => p.compose !== 'init')) {
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
    expect((gateway.ports ?? []).map((mapping) => Number(interpolate(mapping).split(':').at(-1)))).toEqual([port]);
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
      expect(literalEnvValue(k8sContainer('Deployment', writer), k8s, 'WRITER_GROUP_ID')).toBe(composeEnv(compose.services[writer]!).get('WRITER_GROUP_ID'));
    }
  });

  test('the topic table provisions exactly the topics the services derive from their prefix', () => {
    const prefix = composeEnv(compose.services.init!).get('KAFKA_TOPIC_PREFIX')!;
    const provisioned = topicTable().map((row) => `${prefix}.${row.name}`);
    expect([...provisioned].sort()).toEqual(Object.values(topicsFor(prefix)).sort());
    for (const row of topicTable()) {
      expect(Number.isInteger(row.partitions) && row.partitions > 0).toBe(true);
      expect(Number.isInteger(row.retentionMs) && row.retentionMs > 0).toBe(true);
    }
    expect(topicTable().find((row) => row.name === 'trip-locations')?.partitions).toBe(12);
  });

  test('compose mounts the very script that the Kubernetes Job gets from its ConfigMap', () => {
    const mounted = (compose.services.init!.volumes ?? []).map((volume) => volume.split(':')[0]);
    expect(mounted).toContain(`./${topicScriptPath}`);
    const script = k8s.find((o) => o.kind === 'ConfigMap' && o.data?.['create-topics.sh'] !== undefined);
    expect(script?.data?.['create-topics.sh']).toBe(readRepoFile(topicScriptPath));
  });
});
