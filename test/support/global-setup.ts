// Runs once before all test files: brings the compiled services up to date with their sources, provides
// the servers, creates this run's own database (its name always contains "test") with the schema, and
// hands the addresses to the test workers via the environment.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { migrate } from '@fleet/shared/db/migrate';
import { createLogger } from '@fleet/shared/logger';
import { provideInfrastructure, type Infrastructure } from './infrastructure';

declare global {
  // A global declaration is the only way jest's setup can hand an object to its teardown.
  var fleetTestInfrastructure: Infrastructure | undefined;
}

/**
 * The tests that spawn services as processes run their `dist/`: `tsc -b` first, so that running one test
 * file tests the sources as they are, never an earlier build. Incremental, so it costs well under a
 * second when nothing changed (and `npm test` has just built).
 */
function buildServices(): void {
  const build = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b'], {
    cwd: path.resolve(__dirname, '../..'),
    encoding: 'utf8',
  });
  if (build.status !== 0) throw new Error(`tsc -b failed, so the services under test would be stale:\n${build.stdout}${build.stderr}`);
}

export default async function globalSetup(): Promise<void> {
  buildServices();
  const infrastructure = await provideInfrastructure();
  globalThis.fleetTestInfrastructure = infrastructure;

  const url = new URL(infrastructure.postgresUrl);
  url.pathname = `/fleet_test_${process.pid}_${randomBytes(3).toString('hex')}`;
  await migrate(url.toString(), createLogger('test-setup', 'warn'));

  process.env.FLEET_TEST_DATABASE_URL = url.toString();
  process.env.FLEET_TEST_REDIS_URL = infrastructure.redisUrl;
  process.env.FLEET_TEST_KAFKA_BROKERS = infrastructure.kafkaBrokers.join(',');
  process.env.FLEET_TEST_CLIENT_ENV = JSON.stringify(infrastructure.clientEnv);
  process.stdout.write(
    `\ntest servers: ${infrastructure.source}; database ${url.pathname.slice(1)}\n` +
      `test broker: ${infrastructure.kafkaDescription} at ${infrastructure.kafkaBrokers.join(',')}\n`,
  );
}
