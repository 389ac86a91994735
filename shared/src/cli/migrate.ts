// `npm run migrate`: applies the schema migrations to DATABASE_URL, creating the database if needed.
import { z } from 'zod';
import { loadConfig, logLevel, postgresUrl } from '../config';
import { migrate } from '../db/migrate';
import { redactUrl } from '../db/pool';
import { createLogger } from '../logger';

async function main(): Promise<void> {
  const config = loadConfig(z.object({ DATABASE_URL: postgresUrl, LOG_LEVEL: logLevel }));
  const logger = createLogger('migrate', config.LOG_LEVEL);
  try {
    await migrate(config.DATABASE_URL, logger);
  } catch (error) {
    logger.fatal({ database: redactUrl(config.DATABASE_URL) }, `migrations failed: ${(error as Error).message}`);
    process.exitCode = 1;
  }
}

void main();
