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

/**
 * A request path with the token of an invite or sign-in link replaced: `/partner/invite/<token>` and
 * `/partner/magic/<token>` (the link forms mailed before tokens moved after `#`; docs/security.md).
 */
export function redactLinkTokens(url: string): string {
  return url.replace(/^(\/partner\/(?:invite|magic)\/)[^?#]+/, '$1[redacted]');
}

interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  socket?: { remoteAddress?: string; remotePort?: number };
}

/**
 * How a request is logged (`log.x({ req }, …)`, Fastify's own request logs included: it takes this over
 * its default): method, the path with link tokens redacted, host and peer address; no headers.
 */
export function serializeRequest(req: LoggedRequest): Record<string, unknown> {
  return {
    method: req.method,
    url: typeof req.url === 'string' ? redactLinkTokens(req.url) : req.url,
    host: req.host,
    remoteAddress: req.ip ?? req.socket?.remoteAddress,
    remotePort: req.socket?.remotePort,
  };
}

/** A JSON logger; `destination` (e.g. a pino-pretty stream) replaces stdout. */
export function createLogger(name: string, level = 'info', destination?: NodeJS.WritableStream): Logger {
  const opts = {
    name,
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: { req: serializeRequest },
  };
  return destination ? pino(opts, destination) : pino(opts);
}
