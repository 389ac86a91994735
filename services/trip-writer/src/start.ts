// The trip-writer: consumes trip-location commands and stores them in batches.
import { createLogger, startWriter, tripLocationCommandSchema, type Logger, type RunningWriter, type WriterConfig } from '@fleet/shared';
import { storeTripLocations } from './trip-store';

export { writerConfig } from '@fleet/shared';

export function start(config: WriterConfig, logger: Logger = createLogger('trip-writer', config.LOG_LEVEL)): Promise<RunningWriter> {
  return startWriter(
    { name: 'trip-writer', topic: (topics) => topics.tripLocations, schema: tripLocationCommandSchema, store: storeTripLocations },
    config,
    logger,
  );
}
