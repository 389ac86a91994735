// Runs once before all test files: provides the servers, creates this run's own database (its name
// always contains "test") with the schema, and hands the addresses to the test workers via the environment.
import { randomBytes } from 'node:crypto';
import { createLogger, migrate } from '@fleet/shared';
import { provideInfrastructure, type Infrastructure } from './infrastructure';

declare global {
  // eslint-disable-next-line no-var
  var fleetTestInfrastructure: Infrastructure | undefined;
}

export default async function globalSetup(): Promise<void> {
  const infrastructure = await provideInfrastructure();
  globalThis.fleetTestInfrastructure = infrastructure;

  const url = new URL(infrastructure.postgresUrl);
  url.pathname = `/fleet_test_${process.pid}_${randomBytes(3).toString('hex')}`;
  await migrate(url.toString(), createLogger('test-setup', 'warn'));

  process.env.FLEET_TEST_DATABASE_URL = url.toString();
  process.env.FLEET_TEST_REDIS_URL = infrastructure.redisUrl;
  process.env.FLEET_TEST_KAFKA_BROKERS = infrastructure.kafkaBrokers.join(',');
  if (infrastructure.kafkaPid) process.env.FLEET_TEST_KAFKA_PID = String(infrastructure.kafkaPid);
  process.env.FLEET_TEST_CLIENT_ENV = JSON.stringify(infrastructure.clientEnv ?? {});
  process.stdout.write(`\ntest servers: ${infrastructure.source}; database ${url.pathname.slice(1)}\n`);
}
