// Process entry point of the trip-writer.
import { runService, writerConfig } from '@fleet/shared';
import { start } from './start';

runService('trip-writer', () => {
  const config = writerConfig();
  return { level: config.LOG_LEVEL, start: (logger) => start(config, logger) };
});
