// One pino logger per process; every line names its service. Credentials are redacted wherever they
// could appear, so a request or a config object can be logged without leaking a token or a key.
import pino, { type Logger } from 'pino';

export type { Logger };

export const redactedPaths = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'config.jwtSecret',
  'config.apiKeys',
  'token',
  'apiKey',
];

/** Logs to stdout unless given a destination (tests capture lines through one). */
export function createLogger(service: string, level: string = 'info', destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service },
    redact: { paths: redactedPaths, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination ? pino(options, destination) : pino(options);
}
