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

export function createLogger(name: string, level = 'info'): Logger {
  return pino({ name, level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } });
}
