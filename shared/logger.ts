import { pino } from 'pino';
import type { Logger } from 'pino';

export type { Logger };

/** Secrets never reach the logs: bearer headers and anything token-shaped in bodies. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.api_token',
  '*.password',
  '*.key',
  '*.session_token',
];

/** A JSON logger; `destination` (e.g. a pino-pretty stream) replaces stdout. */
export function createLogger(name: string, level = 'info', destination?: NodeJS.WritableStream): Logger {
  const opts = { name, level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  return destination ? pino(opts, destination) : pino(opts);
}
