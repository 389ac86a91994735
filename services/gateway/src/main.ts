// Process entry point of the gateway.
import { runService } from '@fleet/shared/service-runner';
import { commandStopDeadlineMs } from '@fleet/shared/stop-deadline';
import { gatewayConfig } from './config';
import { start } from './start';

runService('gateway', () => {
  const config = gatewayConfig();
  return {
    level: config.LOG_LEVEL,
    // The drain waits for in-flight commands' replies, so the deadline follows REPLY_TIMEOUT_MS.
    stopDeadlineMs: commandStopDeadlineMs(config.REPLY_TIMEOUT_MS),
    start: (logger) => start(config, logger),
  };
});
