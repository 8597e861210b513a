// Pieces every HTTP service registers: the JSON body parser (exact "Invalid JSON body" 400; raw body kept
// for signature checks), one error handler (4xx with an `error` string, 5xx hiding internals), and the
// 404 answer.
import type { FastifyInstance, FastifyError, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    rawBody?: string;
  }
}

export class HttpError extends Error {
  readonly statusCode: number;
  readonly extra: Record<string, unknown> | undefined;
  constructor(statusCode: number, message: string, extra?: Record<string, unknown>) {
    super(message);
    this.statusCode = statusCode;
    this.extra = extra;
  }
}

export function installJsonHandling(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  // text/plain too: navigator.sendBeacon and no-preflight browser posts send JSON under that type.
  app.addContentTypeParser(
    ['application/json', 'text/plain'],
    { parseAs: 'string' },
    (req: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      req.rawBody = text;
      if (text.trim() === '') return done(null, {});
      try {
        done(null, JSON.parse(text));
      } catch {
        done(new HttpError(400, 'Invalid JSON body'));
      }
    },
  );

  app.setErrorHandler((err: FastifyError | HttpError, req, reply) => {
    if (err instanceof HttpError) {
      return reply.code(err.statusCode).send({ error: err.message, ...err.extra });
    }
    const status = err.statusCode ?? 500;
    if (status === 413 || err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply.code(413).send({ error: 'Request body is too large' });
    }
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.code(415).send({ error: 'Content-Type must be application/json' });
    }
    if (err.validation) {
      return reply.code(400).send({ error: `Invalid request: ${err.message}` });
    }
    if (status >= 400 && status < 500) {
      return reply.code(status).send({ error: err.message });
    }
    req.log.error({ err }, 'unhandled error');
    return reply.code(500).send({ error: 'Internal server error' });
  });

  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send({ error: `Route ${req.method} ${req.url.split('?')[0]} not found` });
  });
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The error body of every 4xx/5xx, for response schemas. */
export const ERROR_SCHEMA = {
  type: 'object',
  properties: { error: { type: 'string' } },
  required: ['error'],
} as const;

/** Response schemas for the given error statuses, each `{ error }`. */
export function errorResponses<C extends number>(...codes: C[]): Record<C, typeof ERROR_SCHEMA> {
  return Object.fromEntries(codes.map((c) => [c, ERROR_SCHEMA])) as Record<C, typeof ERROR_SCHEMA>;
}

/** Bodies are validated by hand, so that every 400 carries its own exact message; schemas document. */
export const noValidation = () => () => true;

/** The JSON object body; no body at all is {}; anything but an object is a 400. */
export function jsonBody(req: FastifyRequest): Record<string, unknown> {
  if (req.body === undefined || req.body === null) return {};
  if (!isPlainObject(req.body)) throw new HttpError(400, 'Request body must be a JSON object');
  return req.body;
}

export const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
