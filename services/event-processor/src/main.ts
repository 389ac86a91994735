// Process entry point of the event processor.
import { runService } from '@fleet/shared/service-runner';
import { eventProcessorConfig } from './config';
import { start } from './start';

runService('event-processor', () => {
  const config = eventProcessorConfig();
  return { level: config.LOG_LEVEL, start: (logger) => start(config, logger) };
});
