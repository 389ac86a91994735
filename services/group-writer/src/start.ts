// The group-writer: consumes vehicle-group commands and stores each group with its members.
import { createLogger, startWriter, vehicleGroupCommandSchema, type Logger, type RunningWriter, type WriterConfig } from '@fleet/shared';
import { storeVehicleGroups } from './group-store';

export { writerConfig } from '@fleet/shared';

export function start(config: WriterConfig, logger: Logger = createLogger('group-writer', config.LOG_LEVEL)): Promise<RunningWriter> {
  return startWriter(
    { name: 'group-writer', topic: (topics) => topics.vehicleGroups, schema: vehicleGroupCommandSchema, store: storeVehicleGroups },
    config,
    logger,
  );
}
