// Runs once after all test files: drops this run's database and stops what the setup started.
import { dropDatabase } from '@fleet/shared/db/pool';

export default async function globalTeardown(): Promise<void> {
  const url = process.env.FLEET_TEST_DATABASE_URL;
  if (url && new URL(url).pathname.includes('test')) await dropDatabase(url);
  await globalThis.fleetTestInfrastructure?.stop();
}
