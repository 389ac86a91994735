// Where the test run finds PostgreSQL, Redis and Kafka: addresses from the environment when given;
// otherwise containers through testcontainers when a Docker engine answers; otherwise the machine's own
// PostgreSQL and Redis and a mock Kafka cluster from kcat. Every path is a real server.
import { spawnSync } from 'node:child_process';
import { devBrokerClientEnv, startDevBroker } from '@fleet/shared';

export interface Infrastructure {
  postgresUrl: string;
  redisUrl: string;
  kafkaBrokers: string[];
  /** Client settings the broker needs (the mock cluster's), passed to every service under test. */
  clientEnv?: Record<string, string>;
  /** The mock broker's process id when the run started one (for fault injection). */
  kafkaPid?: number;
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
  const postgres = await new GenericContainer('postgres:15-alpine')
    .withEnvironment({ POSTGRES_USER: 'root', POSTGRES_HOST_AUTH_METHOD: 'trust', POSTGRES_DB: 'postgres' })
    .withExposedPorts(5432)
    .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
    .start();
  const redis = await new GenericContainer('redis:7-alpine').withExposedPorts(6379).start();
  const kafka = await new GenericContainer('apache/kafka:3.9.0')
    .withExposedPorts({ container: 9092, host: 19092 })
    .withEnvironment({
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_LISTENERS: 'PLAINTEXT://:9092,CONTROLLER://:9093',
      KAFKA_ADVERTISED_LISTENERS: 'PLAINTEXT://localhost:19092',
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_NUM_PARTITIONS: '4',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
    })
    .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
    .start();
  return {
    postgresUrl: `postgres://root@${postgres.getHost()}:${postgres.getMappedPort(5432)}/postgres`,
    redisUrl: `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`,
    kafkaBrokers: [`localhost:19092`],
    source: 'testcontainers',
    async stop() {
      await Promise.allSettled([postgres.stop(), redis.stop(), kafka.stop()]);
    },
  };
}

export async function provideInfrastructure(): Promise<Infrastructure> {
  const env = process.env;
  if (env.TEST_DATABASE_URL && env.TEST_REDIS_URL && env.TEST_KAFKA_BROKERS) {
    return {
      postgresUrl: env.TEST_DATABASE_URL,
      redisUrl: env.TEST_REDIS_URL,
      kafkaBrokers: env.TEST_KAFKA_BROKERS.split(','),
      source: 'environment',
      stop: async () => undefined,
    };
  }
  if (dockerAnswers()) return fromContainers();
  const broker = await startDevBroker();
  return {
    postgresUrl: env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres',
    redisUrl: env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    kafkaBrokers: env.TEST_KAFKA_BROKERS?.split(',') ?? broker.brokers,
    kafkaPid: broker.pid,
    clientEnv: { ...devBrokerClientEnv },
    source: 'local services and a kcat mock Kafka cluster',
    stop: () => broker.stop(),
  };
}
