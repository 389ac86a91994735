// The Kubernetes manifests, checked without a cluster: the base and each overlay are rendered by the
// kustomize built into kubectl (which rejects malformed kustomizations), every object is validated
// against its Kubernetes or KEDA schema (kubernetes-models, @kubernetes-models/keda), then probes,
// resources, disruption budgets, autoscaling, pod security and environment are checked; the monitoring
// component's PrometheusRule is the rules file of deploy/observability, and its PodMonitor scrapes every
// service the way the alerts expect.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import { PodMonitor, PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service, type IContainer } from 'kubernetes-models/v1';
import { serviceHeapMiB, serviceNodeArgs, type ServiceName } from '../../deploy/local/src/service-node-args';
import { topicSpecs, topicsFor } from '../../shared/src/kafka/topics';
import {
  appImage,
  containerEnv,
  createTopicsCommand,
  findObject,
  imageParts,
  k8sBaseDir,
  literalEnvValue,
  overlayDir,
  overlayNames,
  parseYaml,
  parseYamlDocuments,
  readRepoFile,
  renderKustomization,
  repoFileExists,
  repoRoot,
  sourceOfCommand,
  workloads,
  type K8sObject,
} from './deploy-files';
import { commandDrainMs, KILL_MARGIN_MS } from '../../shared/src/stop-deadline';
import { gatewayReplyTimeoutMs, processes, stopDeadlinesMs } from './service-env';

/** Every kind the manifests may use, with the model whose JSON schema validates it. */
const models: Array<{ apiVersion: string; kind: string; validate: (object: K8sObject) => void }> = [
  Namespace,
  ConfigMap,
  Secret,
  Service,
  Deployment,
  Job,
  PodDisruptionBudget,
  HorizontalPodAutoscaler,
  ScaledObject,
  PodMonitor,
  PrometheusRule,
].map((Model) => ({
  apiVersion: Model.apiVersion,
  kind: Model.kind,
  validate: (object: K8sObject) => new (Model as unknown as new (data: unknown) => { validate(): void })(object).validate(),
}));

interface Kustomization {
  namespace?: string;
  resources?: string[];
  components?: string[];
  patches?: Array<{ path?: string; patch?: string }>;
  configMapGenerator?: Array<{ name: string; envs?: string[]; files?: string[]; behavior?: string }>;
  secretGenerator?: Array<{ name: string; envs?: string[]; files?: string[] }>;
  images?: Array<{ name: string; newName?: string; newTag?: string }>;
}

function readKustomization(dir: string): Kustomization {
  const file = path.relative(repoRoot, path.join(dir, 'kustomization.yaml'));
  return parseYaml(readRepoFile(file), file) as Kustomization;
}

/** The files a kustomization reads, relative to its folder. */
function filesNamed(kustomization: Kustomization): string[] {
  const generated = [...(kustomization.configMapGenerator ?? []), ...(kustomization.secretGenerator ?? [])].flatMap((generator) => [
    ...(generator.envs ?? []),
    ...(generator.files ?? []).map((file) => file.split('=').at(-1)!),
  ]);
  const patches = (kustomization.patches ?? []).flatMap((patch) => (patch.path ? [patch.path] : []));
  return [...(kustomization.resources ?? []), ...generated, ...patches].filter((entry) => !entry.startsWith('..'));
}

const base = { name: 'base', dir: k8sBaseDir, objects: renderKustomization(k8sBaseDir) };
const overlays = overlayNames.map((name) => ({ name, dir: overlayDir(name), objects: renderKustomization(overlayDir(name)) }));
const renders = [base, ...overlays];
/** Keys of the Secrets the base documents, for renders that leave the real Secret to the cluster. */
const documentedSecrets = new Map(
  base.objects
    .filter((o) => o.kind === 'Secret')
    .map((secret) => [secret.metadata.name, Object.keys({ ...secret.data, ...secret.stringData })]),
);
const appDeployments: ServiceName[] = ['gateway', 'trip-writer', 'group-writer', 'teltonika', 'event-processor'];
const monitoringDir = path.join(repoRoot, 'deploy', 'k8s', 'components', 'monitoring');

function container(objects: K8sObject[], kind: string, name: string): IContainer {
  const owner = findObject(objects, kind, name);
  return owner.spec.template.spec.containers[0] as IContainer;
}

function containerPort(c: IContainer, port: string | number | undefined): number | undefined {
  if (typeof port === 'number') return port;
  return c.ports?.find((p) => p.name === port)?.containerPort;
}

/** How long the container's preStop hook runs before the kubelet sends SIGTERM. */
function preStopMs(c: IContainer): number {
  const preStop = c.lifecycle?.preStop;
  if (!preStop) return 0;
  const [program, seconds, ...rest] = preStop.exec?.command ?? [];
  if (program === 'sleep' && rest.length === 0 && /^\d+$/.test(seconds ?? '')) return Number(seconds) * 1000;
  if (preStop.sleep) return preStop.sleep.seconds * 1000;
  throw new Error(`${c.name}: cannot tell how long its preStop hook runs`);
}

function selects(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}

describe('deploy/k8s kustomizations', () => {
  test.each([
    { name: 'base', dir: k8sBaseDir },
    ...overlayNames.map((name) => ({ name, dir: overlayDir(name) })),
    { name: 'components/monitoring', dir: monitoringDir },
  ])('$name names every file in its folder and every file it names exists', ({ dir }) => {
    const kustomization = readKustomization(dir);
    const named = filesNamed(kustomization);
    const present = readdirSync(dir).filter((file) => file !== 'kustomization.yaml');
    expect([...present].sort()).toEqual([...new Set(named)].sort());
  });

  test('each overlay builds on the base and retags the image the base uses', () => {
    for (const overlay of overlayNames) {
      const kustomization = readKustomization(overlayDir(overlay));
      expect(kustomization.resources).toContain('../../base');
      expect(kustomization.images?.map((image) => image.name)).toEqual([appImage]);
    }
  });

  test('the base puts everything in one namespace that enforces the restricted pod security standard', () => {
    const namespace = readKustomization(k8sBaseDir).namespace;
    expect(namespace).toBeDefined();
    const object = findObject(base.objects, 'Namespace', namespace!);
    expect(object.metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });
});

describe.each(renders)('deploy/k8s $name', ({ name, objects }) => {
  test('every object validates against the schema of its kind', () => {
    const problems: string[] = [];
    for (const object of objects) {
      const model = models.find((m) => m.apiVersion === object.apiVersion && m.kind === object.kind);
      if (!model) {
        problems.push(`${object.apiVersion} ${object.kind} ${object.metadata?.name}: no schema for this kind`);
        continue;
      }
      try {
        model.validate(object);
      } catch (error) {
        problems.push(`${object.kind} ${object.metadata.name}: ${(error as Error).message}`);
      }
    }
    expect(problems).toEqual([]);
  });

  test('every namespaced object is in the application namespace', () => {
    const namespace = readKustomization(k8sBaseDir).namespace;
    for (const object of objects.filter((o) => o.kind !== 'Namespace')) {
      expect({ object: `${object.kind}/${object.metadata.name}`, namespace: object.metadata.namespace }).toEqual({
        object: `${object.kind}/${object.metadata.name}`,
        namespace,
      });
    }
  });

  test('the gateway, both writers, the event processor, the Teltonika listener, the topic Job and the migration Job are all there', () => {
    for (const deployment of appDeployments) expect(() => findObject(objects, 'Deployment', deployment)).not.toThrow();
    for (const job of ['fleet-create-topics', 'fleet-migrate']) expect(() => findObject(objects, 'Job', job)).not.toThrow();
  });

  test("each service runs with its Node.js flags, V8's old generation at 3/4 of its memory limit", () => {
    for (const service of appDeployments) {
      const c = container(objects, 'Deployment', service);
      expect({ service, NODE_OPTIONS: literalEnvValue(c, objects, 'NODE_OPTIONS') }).toEqual({
        service,
        NODE_OPTIONS: ['--enable-source-maps', ...serviceNodeArgs(service)].join(' '),
      });
      expect({ service, heap: serviceHeapMiB[service] * 2 ** 20 }).toEqual({
        service,
        heap: 0.75 * quantity(String(c.resources!.limits!.memory)),
      });
    }
  });

  test('every container has CPU and memory requests no larger than its limits', () => {
    for (const { owner, pod } of workloads(objects)) {
      for (const c of pod.containers) {
        const { requests = {}, limits = {} } = c.resources ?? {};
        for (const resource of ['cpu', 'memory']) {
          expect({
            container: `${owner.metadata.name}/${c.name}`,
            resource,
            request: requests[resource] !== undefined,
            limit: limits[resource] !== undefined,
          }).toEqual({
            container: `${owner.metadata.name}/${c.name}`,
            resource,
            request: true,
            limit: true,
          });
          expect(quantity(String(requests[resource]))).toBeLessThanOrEqual(quantity(String(limits[resource])));
        }
      }
    }
  });

  test('every pod meets the restricted pod security standard and mounts no service account token', () => {
    for (const { owner, pod } of workloads(objects)) {
      const where = `${owner.kind}/${owner.metadata.name}`;
      expect({ where, automount: pod.automountServiceAccountToken }).toEqual({ where, automount: false });
      expect({ where, runAsNonRoot: pod.securityContext?.runAsNonRoot, seccomp: pod.securityContext?.seccompProfile?.type }).toEqual({
        where,
        runAsNonRoot: true,
        seccomp: 'RuntimeDefault',
      });
      // The images' users are non-root, but only a numeric one lets the kubelet verify runAsNonRoot.
      expect(pod.securityContext?.runAsUser).toBeGreaterThan(0);
      for (const c of pod.containers) {
        expect({ where, escalation: c.securityContext?.allowPrivilegeEscalation, drop: c.securityContext?.capabilities?.drop }).toEqual({
          where,
          escalation: false,
          drop: ['ALL'],
        });
      }
    }
  });

  test('the gateway is probed on /healthz for liveness and /readyz for readiness, on its HTTP port', () => {
    const gateway = container(objects, 'Deployment', 'gateway');
    const port = literalEnvValue(gateway, objects, 'PORT');
    expect(gateway.livenessProbe?.httpGet?.path).toBe('/healthz');
    expect(gateway.readinessProbe?.httpGet?.path).toBe('/readyz');
    for (const probe of [gateway.livenessProbe, gateway.readinessProbe, gateway.startupProbe]) {
      expect(String(containerPort(gateway, probe?.httpGet?.port))).toBe(port);
    }
  });

  test('each writer is probed on the metrics port it is told to serve', () => {
    for (const writer of ['trip-writer', 'group-writer']) {
      const c = container(objects, 'Deployment', writer);
      const port = literalEnvValue(c, objects, 'METRICS_PORT');
      for (const probe of [c.livenessProbe, c.readinessProbe]) {
        expect(probe?.httpGet?.path).toBe('/metrics');
        expect(String(containerPort(c, probe?.httpGet?.port))).toBe(port);
      }
    }
  });

  test('Prometheus scrape annotations point at the /metrics port of each service', () => {
    for (const deployment of appDeployments) {
      const owner = findObject(objects, 'Deployment', deployment);
      const annotations = owner.spec.template.metadata.annotations ?? {};
      const c = container(objects, 'Deployment', deployment);
      expect(annotations['prometheus.io/scrape']).toBe('true');
      expect(annotations['prometheus.io/path']).toBe('/metrics');
      expect(literalEnvValue(c, objects, deployment === 'gateway' ? 'PORT' : 'METRICS_PORT')).toBe(annotations['prometheus.io/port']);
    }
  });

  test('each Deployment gets longer than its preStop hook and its own stop deadline before SIGKILL', () => {
    const replyTimeoutMs = gatewayReplyTimeoutMs(literalEnvValue(container(objects, 'Deployment', 'gateway'), objects, 'REPLY_TIMEOUT_MS'));
    for (const [deployment, deadlineMs] of Object.entries(stopDeadlinesMs(replyTimeoutMs))) {
      const pod = findObject(objects, 'Deployment', deployment).spec.template.spec;
      // The Kubernetes default when a pod sets none; the grace period starts with the preStop hook.
      const graceMs = (pod.terminationGracePeriodSeconds ?? 30) * 1000;
      const neededMs = preStopMs(container(objects, 'Deployment', deployment)) + deadlineMs + KILL_MARGIN_MS;
      expect({ deployment, graceMs, enough: graceMs >= neededMs }).toEqual({ deployment, graceMs, enough: true });
    }
    const gateway = container(objects, 'Deployment', 'gateway');
    const gatewayGraceMs = findObject(objects, 'Deployment', 'gateway').spec.template.spec.terminationGracePeriodSeconds * 1000;
    expect(gatewayGraceMs).toBeGreaterThan(preStopMs(gateway) + commandDrainMs(replyTimeoutMs) + KILL_MARGIN_MS);
  });

  test('no Deployment fixes its replica count, which belongs to its autoscaler', () => {
    for (const deployment of appDeployments) expect(findObject(objects, 'Deployment', deployment).spec.replicas).toBeUndefined();
  });

  test('each Deployment has a PodDisruptionBudget that selects its pods and no others', () => {
    const budgets = objects.filter((o) => o.kind === 'PodDisruptionBudget');
    for (const { owner, labels } of workloads(objects).filter((w) => w.owner.kind === 'Deployment')) {
      const matching = budgets.filter((budget) => selects(budget.spec.selector.matchLabels, labels));
      expect({ deployment: owner.metadata.name, budgets: matching.length }).toEqual({ deployment: owner.metadata.name, budgets: 1 });
      const others = workloads(objects).filter((w) => w.owner !== owner && selects(matching[0]!.spec.selector.matchLabels, w.labels));
      expect(others).toEqual([]);
    }
  });

  test('the gateway Service selects the gateway pods and targets their HTTP port', () => {
    const service = findObject(objects, 'Service', 'gateway');
    const deployment = findObject(objects, 'Deployment', 'gateway');
    expect(selects(service.spec.selector, deployment.spec.template.metadata.labels)).toBe(true);
    expect(selects(deployment.spec.selector.matchLabels, deployment.spec.template.metadata.labels)).toBe(true);
    const gateway = container(objects, 'Deployment', 'gateway');
    for (const port of service.spec.ports) {
      expect(String(containerPort(gateway, port.targetPort))).toBe(literalEnvValue(gateway, objects, 'PORT'));
    }
  });

  test('the gateway scales with an autoscaling/v2 HorizontalPodAutoscaler on CPU', () => {
    const hpa = findObject(objects, 'HorizontalPodAutoscaler', 'gateway');
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'gateway' });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(1);
    expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
    expect(hpa.spec.metrics).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'Resource', resource: expect.objectContaining({ name: 'cpu' }) })]),
    );
  });

  test('the reply topic has twice the partitions of the gateways and Teltonika listeners a rollout can reach at their maximum', () => {
    /** Pods of a Deployment at its autoscaler's maximum with its rollout's surge on top. */
    const mostDuringRollout = (name: string) => {
      const most = findObject(objects, 'HorizontalPodAutoscaler', name).spec.maxReplicas as number;
      const surge = findObject(objects, 'Deployment', name).spec.strategy.rollingUpdate.maxSurge as number | string;
      return most + (typeof surge === 'number' ? surge : Math.ceil((most * parseInt(surge, 10)) / 100));
    };
    const members = mostDuringRollout('gateway') + mostDuringRollout('teltonika');
    const replies = topicSpecs.find((spec) => spec.name === 'replies')!;
    expect(2 * members).toBeLessThanOrEqual(replies.partitions);
  });

  test('the Teltonika listener is probed on /healthz and /readyz of its metrics port, and its Service takes devices on TCP 5027', () => {
    const c = container(objects, 'Deployment', 'teltonika');
    const metricsPort = literalEnvValue(c, objects, 'METRICS_PORT');
    expect(c.livenessProbe?.httpGet?.path).toBe('/healthz');
    expect(c.readinessProbe?.httpGet?.path).toBe('/readyz');
    for (const probe of [c.livenessProbe, c.readinessProbe]) expect(String(containerPort(c, probe?.httpGet?.port))).toBe(metricsPort);
    const service = findObject(objects, 'Service', 'teltonika');
    const [port] = service.spec.ports;
    expect({ port: port.port, protocol: port.protocol, target: String(containerPort(c, port.targetPort)) }).toEqual({
      port: 5027,
      protocol: 'TCP',
      target: literalEnvValue(c, objects, 'TELTONIKA_PORT'),
    });
  });

  test.each([
    ['trip-writer', 'tripLocations'],
    ['group-writer', 'vehicleGroups'],
  ] as const)('%s scales with KEDA on the lag of its own consumer group, at most one replica per partition', (writer, topicKey) => {
    const scaled = findObject(objects, 'ScaledObject', writer);
    expect(scaled.apiVersion).toBe('keda.sh/v1alpha1');
    expect(scaled.spec.scaleTargetRef.name).toBe(writer);
    // A drain never evicts the last one: its PodDisruptionBudget keeps one, and KEDA keeps more than that.
    const budget = findObject(objects, 'PodDisruptionBudget', writer);
    const kept = budget.spec.minAvailable ?? scaled.spec.minReplicaCount - budget.spec.maxUnavailable;
    expect(kept).toBeGreaterThanOrEqual(1);
    expect(scaled.spec.minReplicaCount).toBeGreaterThan(kept);
    expect(scaled.spec.maxReplicaCount ?? Infinity).toBeGreaterThanOrEqual(scaled.spec.minReplicaCount);
    const [trigger, ...others] = scaled.spec.triggers;
    expect(others).toEqual([]);
    expect(trigger.type).toBe('kafka');

    const c = container(objects, 'Deployment', writer);
    const prefix = literalEnvValue(c, objects, 'KAFKA_TOPIC_PREFIX')!;
    expect(trigger.metadata.consumerGroup).toBe(`${prefix}.${writer}`);
    expect(literalEnvValue(c, objects, 'WRITER_GROUP_ID')).toBe(trigger.metadata.consumerGroup);
    const topic = topicsFor(prefix)[topicKey];
    expect(trigger.metadata.topic).toBe(topic);
    expect(literalEnvValue(c, objects, trigger.metadata.bootstrapServersFromEnv)).toBeTruthy();
    // The writers subscribe from the beginning of the topic; the lag they export on /metrics
    // (fleet_consumer_group_lag{group, topic}, shared/src/kafka/consumer-lag.ts) counts a partition without a
    // committed offset from its earliest record, as this trigger does, for this group and this topic.
    expect(trigger.metadata.offsetResetPolicy).toBe('earliest');
    expect(Number(trigger.metadata.lagThreshold)).toBeGreaterThan(0);

    const partitions = topicSpecs.find((spec) => spec.name === topicKey)!.partitions;
    expect(scaled.spec.maxReplicaCount).toBeLessThanOrEqual(partitions);
    expect(trigger.metadata.allowIdleConsumers).toBe('false');
  });

  test('a Job creates the topics with the application image and the create-topics command, as its own user', () => {
    const job = findObject(objects, 'Job', 'fleet-create-topics');
    const pod = job.spec.template.spec;
    const c = pod.containers[0] as IContainer;
    const gateway = findObject(objects, 'Deployment', 'gateway').spec.template.spec;
    expect(c.command).toEqual(createTopicsCommand);
    expect(c.image).toBe(container(objects, 'Deployment', 'gateway').image);
    expect(c.volumeMounts).toBeUndefined();
    expect(pod.volumes).toBeUndefined();
    // The application image's user, as for every other pod that runs it.
    expect({ runAsUser: pod.securityContext?.runAsUser, runAsGroup: pod.securityContext?.runAsGroup }).toEqual({
      runAsUser: gateway.securityContext?.runAsUser,
      runAsGroup: gateway.securityContext?.runAsGroup,
    });
    expect(['OnFailure', 'Never']).toContain(pod.restartPolicy);
    // Production runs three brokers; a single development broker cannot hold more than one replica.
    expect(literalEnvValue(c, objects, 'TOPIC_REPLICATION_FACTOR')).toBe(name === 'dev' ? '1' : '3');
  });

  test('a Job runs the migrations with the application image', () => {
    const c = container(objects, 'Job', 'fleet-migrate');
    expect(c.command).toEqual(['node', 'shared/dist/cli/migrate.js']);
    expect(c.image).toBe(container(objects, 'Deployment', 'gateway').image);
  });

  test('every application container runs an entry point that exists in the sources, from the one image', () => {
    const images = new Set<string>();
    for (const { owner, pod } of workloads(objects)) {
      for (const c of pod.containers.filter((c) => imageParts(c.image!).name === appImage)) {
        images.add(c.image!);
        const source = sourceOfCommand(c.command ?? []);
        expect({ owner: owner.metadata.name, source, exists: source !== undefined && repoFileExists(source) }).toEqual({
          owner: owner.metadata.name,
          source,
          exists: true,
        });
      }
    }
    expect(images.size).toBe(1);
  });

  describe.each(processes)('$kubernetes.name', (expected) => {
    const owner = findObject(objects, expected.kubernetes.kind, expected.kubernetes.name);
    const c = owner.spec.template.spec.containers[0] as IContainer;
    const env = containerEnv(c, objects, documentedSecrets);
    const mayBeUnset = expected.mayBeUnset.kubernetes ?? {};

    test('sets every variable the process reads, apart from the listed optional ones', () => {
      expect(expected.reads.filter((variable) => !env.has(variable) && !(variable in mayBeUnset))).toEqual([]);
    });

    test('sets no variable the process does not read', () => {
      expect([...env.keys()].filter((variable) => !expected.reads.includes(variable))).toEqual([]);
    });
  });

  test('the gateway is configured with exactly one token verification key', () => {
    const gateway = container(objects, 'Deployment', 'gateway');
    const env = containerEnv(gateway, objects, documentedSecrets);
    expect(env.get('JWT_SECRET')).toMatch(/^Secret /);
    expect(literalEnvValue(gateway, objects, 'JWT_PUBLIC_KEY')).toBe('');
    expect(literalEnvValue(gateway, objects, 'JWKS_URL')).toBe('');
    // A fixed instance id would make every pod share one reply consumer group.
    expect(gateway.env?.find((v) => v.name === 'GATEWAY_INSTANCE_ID')?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.name');
  });

  if (name === 'production') {
    test('renders no placeholder Secret, so applying it never overwrites the real one', () => {
      expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    });

    test('pulls a released image from a registry, not a development tag', () => {
      for (const { pod } of workloads(objects)) {
        for (const c of pod.containers.filter((c) => imageParts(c.image!).name === appImage)) {
          expect(c.image).toMatch(/^[a-z0-9.-]+\.[a-z]+(:\d+)?\//);
          expect(imageParts(c.image!).tag).toMatch(/^\d+\.\d+\.\d+/);
        }
      }
    });
  }

  if (name !== 'base') {
    test('the overlay changed the application image, so its image transformer matched', () => {
      const image = container(objects, 'Deployment', 'gateway').image!;
      expect(image).not.toBe(container(base.objects, 'Deployment', 'gateway').image);
    });
  }
});

describe('deploy/k8s base secret', () => {
  test('holds placeholders only, never a usable credential', () => {
    const [secret] = parseYamlDocuments(readRepoFile('deploy/k8s/base/secret.yaml'), 'secret.yaml') as K8sObject[];
    expect(secret!.data).toBeUndefined();
    for (const [key, value] of Object.entries(secret!.stringData ?? {})) {
      const credential = /^[a-z]+:\/\//.test(value) ? decodeURIComponent(new URL(value).password) : value;
      expect({ key, placeholder: credential === '' || credential.includes('CHANGE_ME') }).toEqual({ key, placeholder: true });
    }
  });
});

/** Kubernetes quantities ("250m", "1", "512Mi") as numbers of one unit, enough to compare two. */
function quantity(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(m|k|M|G|Ki|Mi|Gi)?$/.exec(text);
  if (!match) throw new Error(`not a quantity: ${text}`);
  const factors: Record<string, number> = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };
  return Number(match[1]) * (match[2] ? factors[match[2]]! : 1);
}

describe('deploy/k8s components/monitoring, in the production overlay', () => {
  const production = overlays.find((overlay) => overlay.name === 'production')!.objects;

  test('the production overlay includes it', () => {
    expect(readKustomization(overlayDir('production')).components).toContain('../../components/monitoring');
  });

  test('its PrometheusRule is generated from deploy/observability/alerts.yml and holds the same rules', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS script of deploy/, outside the typed sources
    const generator = require('../../deploy/observability/render-prometheus-rule.js') as { render(): string; outputFile: string };
    const committed = readRepoFile(path.relative(repoRoot, generator.outputFile));
    expect({ upToDate: committed === generator.render(), regenerate: 'node deploy/observability/render-prometheus-rule.js' }).toEqual({
      upToDate: true,
      regenerate: 'node deploy/observability/render-prometheus-rule.js',
    });
    const rules = parseYaml(readRepoFile('deploy/observability/alerts.yml'), 'alerts.yml') as { groups: unknown[] };
    expect(findObject(production, 'PrometheusRule', 'fleet-telemetry').spec).toEqual({ groups: rules.groups });
  });

  test.each(appDeployments)(
    'its PodMonitor scrapes %s on the /metrics port it is annotated with, labelled with that name',
    (deployment) => {
      const monitor = findObject(production, 'PodMonitor', 'fleet-telemetry');
      const owner = findObject(production, 'Deployment', deployment);
      const podLabels: Record<string, string> = owner.spec.template.metadata.labels;
      const selected = (monitor.spec.selector.matchExpressions as Array<{ key: string; operator: string; values: string[] }>).every(
        (expression) => expression.operator === 'In' && expression.values.includes(podLabels[expression.key]!),
      );
      expect(selected).toBe(true);

      const c = container(production, 'Deployment', deployment);
      const annotatedPort = Number(owner.spec.template.metadata.annotations['prometheus.io/port']);
      const endpoints = (monitor.spec.podMetricsEndpoints as Array<Record<string, any>>).filter(
        (endpoint) => containerPort(c, endpoint.port) === annotatedPort,
      );
      expect(endpoints).toHaveLength(1);
      const [endpoint] = endpoints;
      expect(endpoint!.path).toBe('/metrics');
      // The services label their own series `service`; the target must carry the same, and not rename theirs.
      expect(endpoint!.honorLabels).toBe(true);
      const relabel = (endpoint!.relabelings as Array<{ sourceLabels?: string[]; targetLabel: string }>).find(
        (r) => r.targetLabel === 'service',
      );
      expect(relabel?.sourceLabels).toEqual(['__meta_kubernetes_pod_label_app_kubernetes_io_name']);
      expect(podLabels['app.kubernetes.io/name']).toBe(deployment);
    },
  );
});
