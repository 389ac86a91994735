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

export function createLogger(service: string, level: string = 'info'): Logger {
  return pino({
    level,
    base: { service },
    redact: { paths: redactedPaths, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
