// Process entry point of the gateway.
import { runService } from '@fleet/shared';
import { gatewayConfig } from './config';
import { start } from './start';

runService('gateway', () => {
  const config = gatewayConfig();
  return { level: config.LOG_LEVEL, start: (logger) => start(config, logger) };
});
