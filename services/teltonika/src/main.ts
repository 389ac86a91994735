// Process entry point of the Teltonika listener. TELTONIKA_PORT=0 turns it off: the process says so and
// ends, so that a deployment can keep the service and switch the protocol off.
import { createLogger } from '@fleet/shared/logger';
import { runService } from '@fleet/shared/service-runner';
import { commandStopDeadlineMs } from '@fleet/shared/stop-deadline';
import { teltonikaConfig } from './config';
import { startTeltonika } from './start';

if (process.env.TELTONIKA_PORT?.trim() === '0') {
  createLogger('teltonika').info('TELTONIKA_PORT is 0: the Teltonika listener is off');
} else {
  runService('teltonika', () => {
    const config = teltonikaConfig();
    return {
      level: config.LOG_LEVEL,
      // The drain waits for the packets being stored, so the deadline follows REPLY_TIMEOUT_MS.
      stopDeadlineMs: commandStopDeadlineMs(config.REPLY_TIMEOUT_MS),
      start: (logger) => startTeltonika(config, logger),
    };
  });
}
