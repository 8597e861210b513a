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
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return done(new HttpError(400, 'Invalid JSON body'));
      }
      // Only escapes produce these characters (raw NULs are invalid JSON; invalid UTF-8 decodes to U+FFFD).
      if (ESCAPED_NUL_OR_SURROGATE.test(text)) {
        const clean = cleanStrings(parsed);
        if (clean === BAD_STRING) return done(new HttpError(400, UNPAIRED_SURROGATE));
        parsed = clean;
      }
      done(null, parsed);
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

const ESCAPED_NUL_OR_SURROGATE = /\\u(?:0000|[dD][89a-fA-F])/;
const BAD_STRING = Symbol('bad string');
export const UNPAIRED_SURROGATE = 'Invalid JSON body: a string contains an unpaired UTF-16 surrogate';

/**
 * Every string of a parsed JSON value (keys too) without NUL characters, which Postgres text and jsonb
 * cannot hold; BAD_STRING when one is not well-formed UTF-16 (an unpaired surrogate escape such as
 * "\ud800"): stored, it would come back as U+FFFD, a different string than the one a caller matches on
 * (a transaction_id, a customer_key), and jsonb refuses it outright.
 */
function cleanStrings(v: unknown): unknown {
  if (typeof v === 'string') {
    if (!v.isWellFormed()) return BAD_STRING;
    return v.includes('\u0000') ? v.replaceAll('\u0000', '') : v;
  }
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const x of v) {
      const c = cleanStrings(x);
      if (c === BAD_STRING) return BAD_STRING;
      out.push(c);
    }
    return out;
  }
  if (isPlainObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const key = cleanStrings(k);
      const c = cleanStrings(x);
      if (key === BAD_STRING || c === BAD_STRING) return BAD_STRING;
      out[key as string] = c;
    }
    return out;
  }
  return v;
}

/** Whether some string in a JSON value (keys too) holds a NUL or an unpaired surrogate. */
export function hasUnstorableString(v: unknown): boolean {
  if (typeof v === 'string') return v.includes('\u0000') || !v.isWellFormed();
  if (Array.isArray(v)) return v.some(hasUnstorableString);
  if (isPlainObject(v))
    return Object.entries(v).some(([k, x]) => hasUnstorableString(k) || hasUnstorableString(x));
  return false;
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
