// Process entry point of the trip-writer.
import { runService } from '@fleet/shared/service-runner';
import { writerConfig } from './config';
import { start } from './start';

runService('trip-writer', () => {
  const config = writerConfig();
  return { level: config.LOG_LEVEL, start: (logger) => start(config, logger) };
});
