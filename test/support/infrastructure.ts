// Where the test run finds PostgreSQL, Redis and Kafka, in this order: addresses from the TEST_*
// variables; containers through testcontainers where a Docker engine answers; the machine's own
// PostgreSQL and Redis with a local Apache Kafka of this run's own (Java and Maven); librdkafka's mock
// cluster from kcat only where Java is missing, and never under CI=true. Every path is a real server.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { javaToolsPresent, KAFKA_VERSION, startLocalKafka } from '../../deploy/local/src/apache-kafka';
import { freePort } from '../../deploy/local/src/local-ports';
import { kcatAvailable, mockKafkaClientEnv, startMockKafka } from '../../deploy/local/src/mock-kafka';

export interface Infrastructure {
  postgresUrl: string;
  redisUrl: string;
  kafkaBrokers: string[];
  /** Says which broker runs, and its version. */
  kafkaDescription: string;
  /** Client settings the broker needs (the mock cluster's), passed to every service under test. */
  clientEnv: Record<string, string>;
  source: string;
  stop(): Promise<void>;
}

function dockerAnswers(): boolean {
  if (process.env.FLEET_TEST_NO_DOCKER === 'true') return false;
  const probe = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { timeout: 5000, stdio: 'pipe' });
  return probe.status === 0 && probe.stdout.toString().trim().length > 0;
}

async function fromContainers(): Promise<Infrastructure> {
  // Loaded only on this path, so runs without Docker never touch the Docker client.
  const { GenericContainer, Wait } = await import('testcontainers');
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const { RedisContainer } = await import('@testcontainers/redis');
  const postgres = await new PostgreSqlContainer('postgres:15-alpine').withUsername('root').withDatabase('postgres').start();
  const redis = await new RedisContainer('redis:7-alpine').start();
  // Kafka is the apache/kafka image compose and Kubernetes run: @testcontainers/kafka (11.x) starts only
  // Confluent's cp-kafka image, another distribution than the one deployed, so this one is generic.
  // Kafka tells clients the address to reconnect to, so the host port is chosen first and advertised.
  const kafkaPort = await freePort();
  const kafka = await new GenericContainer(`apache/kafka:${KAFKA_VERSION}`)
    .withExposedPorts({ container: 9092, host: kafkaPort })
    .withEnvironment({
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_LISTENERS: 'PLAINTEXT://:9092,CONTROLLER://:9093',
      KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://localhost:${kafkaPort}`,
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
      KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
    })
    .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
    .start();
  return {
    postgresUrl: postgres.getConnectionUri(),
    redisUrl: redis.getConnectionUrl(),
    kafkaBrokers: [`localhost:${kafkaPort}`],
    kafkaDescription: `Apache Kafka ${KAFKA_VERSION} (container apache/kafka:${KAFKA_VERSION})`,
    clientEnv: {},
    source: 'testcontainers',
    async stop() {
      await Promise.allSettled([postgres.stop(), redis.stop(), kafka.stop()]);
    },
  };
}

/** A broker of this run's own, on free ports and a fresh directory, gone when the run ends. */
async function localApacheKafka(): Promise<{ brokers: string[]; description: string; stop(): Promise<void> }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fleet-test-kafka-'));
  const kafka = await startLocalKafka({ dataDir, port: await freePort(), controllerPort: await freePort(), tiedToThisProcess: true });
  return {
    brokers: kafka.brokers,
    description: `Apache Kafka ${kafka.version} (local JVM broker, pid ${kafka.pid})`,
    async stop() {
      await kafka.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** What the machine offers, asked in this order; a test hands its own answers. */
export interface MachineProbes {
  docker: () => boolean;
  java: () => boolean;
  kcat: () => boolean;
}

const machine: MachineProbes = { docker: dockerAnswers, java: javaToolsPresent, kcat: kcatAvailable };

export async function provideInfrastructure(
  env: NodeJS.ProcessEnv = process.env,
  probes: MachineProbes = machine,
): Promise<Infrastructure> {
  if (env.TEST_DATABASE_URL && env.TEST_REDIS_URL && env.TEST_KAFKA_BROKERS) {
    return {
      postgresUrl: env.TEST_DATABASE_URL,
      redisUrl: env.TEST_REDIS_URL,
      kafkaBrokers: env.TEST_KAFKA_BROKERS.split(','),
      kafkaDescription: `the Kafka at TEST_KAFKA_BROKERS (${env.TEST_KAFKA_BROKERS})`,
      clientEnv: {},
      source: 'environment',
      stop: async () => undefined,
    };
  }
  if (probes.docker()) return fromContainers();
  const local = {
    postgresUrl: env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres',
    redisUrl: env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
  };
  if (probes.java()) {
    const kafka = await localApacheKafka();
    return {
      ...local,
      kafkaBrokers: kafka.brokers,
      kafkaDescription: kafka.description,
      clientEnv: {},
      source: 'local services and a local Apache Kafka',
      stop: () => kafka.stop(),
    };
  }
  // CI must prove the product on Apache Kafka: a run that fell back to the mock would pass quietly.
  if (env.CI === 'true') {
    throw new Error('CI=true: the tests run on Apache Kafka, and Java 17+ or Maven is missing; the kcat mock is refused under CI');
  }
  if (!probes.kcat()) throw new Error('no Kafka for the tests: install Java 17+ and Maven (Apache Kafka), or kcat (a mock cluster)');
  const mock = await startMockKafka();
  return {
    ...local,
    kafkaBrokers: mock.brokers,
    kafkaDescription: `librdkafka's mock cluster (kcat ${mock.version}), a fallback: Java and Maven are missing`,
    clientEnv: { ...mockKafkaClientEnv },
    source: 'local services and a kcat mock Kafka cluster',
    stop: () => mock.stop(),
  };
}
