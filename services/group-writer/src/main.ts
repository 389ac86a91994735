// Process entry point of the group-writer.
import { runService } from '@fleet/shared/service-runner';
import { groupWriterConfig } from './config';
import { start } from './start';

runService('group-writer', () => {
  const config = groupWriterConfig();
  return { level: config.LOG_LEVEL, start: (logger) => start(config, logger) };
});
