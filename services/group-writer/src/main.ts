// Process entry point of the group-writer.
import { runService, writerConfig } from '@fleet/shared';
import { start } from './start';

runService('group-writer', () => {
  const config = writerConfig();
  return { level: config.LOG_LEVEL, start: (logger) => start(config, logger) };
});
