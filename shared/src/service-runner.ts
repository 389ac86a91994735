// What every service's main.ts does: parse config, start, stop gracefully on SIGTERM/SIGINT. A bad
// variable or an unreachable dependency ends the process with one clear line, not a stack trace loop.
import { setFlagsFromString } from 'node:v8';
import { ConfigError } from './config';
import { createLogger, type Logger } from './logger';
import { DEFAULT_STOP_DEADLINE_MS } from './stop-deadline';

export interface RunningService {
  stop(): Promise<void>;
}

export interface PreparedService {
  level: string;
  /** How long stop() may take before the process exits anyway; DEFAULT_STOP_DEADLINE_MS when absent. */
  stopDeadlineMs?: number;
  start: (logger: Logger) => Promise<RunningService>;
}

export function runService(name: string, prepare: () => PreparedService): void {
  // V8 pretenures an allocation site once most of its objects outlive one young collection, and never
  // looks again. Under load a service's per-request objects (a parsed body, a command, its encoding) are
  // alive at whichever collection falls while requests are in flight, so their sites were moved to the
  // old generation for good, where they died young all the same: the gateway ran a full mark-compact
  // every ~350 ms. Set here rather than in NODE_OPTIONS, which does not take this flag.
  setFlagsFromString('--no-allocation-site-pretenuring');
  let logger = createLogger(name);
  let prepared: PreparedService;
  try {
    prepared = prepare();
  } catch (error) {
    logger.fatal(error instanceof ConfigError ? error.message : `cannot start: ${(error as Error).message}`);
    process.exitCode = 1;
    return;
  }
  logger = createLogger(name, prepared.level);
  process.on('uncaughtException', (error) => {
    logger.fatal({ err: error }, 'uncaught exception');
    process.exit(1);
  });

  prepared.start(logger).then(
    (service) => {
      let stopping = false;
      const shutdown = (signal: string) => {
        if (stopping) return;
        stopping = true;
        const deadlineMs = prepared.stopDeadlineMs ?? DEFAULT_STOP_DEADLINE_MS;
        logger.info({ signal, deadlineMs }, 'stopping');
        const deadline = setTimeout(() => {
          logger.error({ deadlineMs }, 'graceful stop took too long; exiting');
          process.exit(1);
        }, deadlineMs);
        deadline.unref();
        service.stop().then(
          () => process.exit(0),
          (error) => {
            logger.error({ err: error }, 'error while stopping');
            process.exit(1);
          },
        );
      };
      process.on('SIGTERM', () => shutdown('SIGTERM'));
      process.on('SIGINT', () => shutdown('SIGINT'));
      // Started by a launcher over IPC (npm start): it learns that this very process started (not
      // whatever answers its port), and when the launcher dies, so does the service.
      if (process.send) {
        process.send({ event: 'started' });
        process.on('disconnect', () => shutdown('launcher exited'));
      }
    },
    (error: Error) => {
      logger.fatal(`cannot start: ${error.message}`);
      process.exit(1);
    },
  );
}
