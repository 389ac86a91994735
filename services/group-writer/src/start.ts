// The group-writer: consumes vehicle-group commands (consume.ts) and stores each group with its members
// (group-store.ts).
import { createLogger, startWriter, type Logger, type RunningWriter, type WriterConfig } from '@fleet/shared';
import { consumeVehicleGroups } from './consume';

export { writerConfig } from '@fleet/shared';

export function start(config: WriterConfig, logger: Logger = createLogger('group-writer', config.LOG_LEVEL)): Promise<RunningWriter> {
  return startWriter({ name: 'group-writer', topic: (topics) => topics.vehicleGroups, consume: consumeVehicleGroups }, config, logger);
}
