// The trip-writer: consumes trip-location commands (consume.ts) and stores them in batches (trip-store.ts).
import { createLogger, startWriter, type Logger, type RunningWriter, type WriterConfig } from '@fleet/shared';
import { consumeTripLocations } from './consume';

export { writerConfig } from '@fleet/shared';

export function start(config: WriterConfig, logger: Logger = createLogger('trip-writer', config.LOG_LEVEL)): Promise<RunningWriter> {
  return startWriter({ name: 'trip-writer', topic: (topics) => topics.tripLocations, consume: consumeTripLocations }, config, logger);
}
