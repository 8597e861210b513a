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
      if (jsonTooDeep(text)) return done(new HttpError(400, TOO_DEEP));
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
 * How deep a JSON body may nest arrays and objects. Far beyond any real payload (line_items, metadata),
 * and it keeps every recursive walk over a body or a command (ours, JSON.stringify's) far from the stack
 * limit: 3,000 levels of `{"a":` in 18 KB used to overflow the workers' stack.
 */
export const MAX_JSON_DEPTH = 64;
export const TOO_DEEP = `Invalid JSON body: nested deeper than ${MAX_JSON_DEPTH} levels`;

/**
 * Whether JSON text nests arrays/objects deeper than `max` (brackets inside strings do not count).
 * Linear and without recursion; a body with at most `max` opening brackets in all, which is every
 * ordinary one, is answered by two indexOf scans.
 */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let opens = 0;
  for (let i = text.indexOf('{'); i !== -1 && opens <= max; i = text.indexOf('{', i + 1)) opens++;
  for (let i = text.indexOf('['); i !== -1 && opens <= max; i = text.indexOf('[', i + 1)) opens++;
  if (opens <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * Every string of a parsed JSON value (keys too) without NUL characters, which Postgres text and jsonb
 * cannot hold; BAD_STRING when one is not well-formed UTF-16 (an unpaired surrogate escape such as
 * "\ud800"): stored, it would come back as U+FFFD, a different string than the one a caller matches on
 * (a transaction_id, a customer_key), and jsonb refuses it outright. Recursive: the depth is bounded first.
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
      // An own property, as JSON.parse makes it: assigning "__proto__" would set the prototype instead.
      Object.defineProperty(out, key as string, {
        value: c,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return v;
}

/**
 * Why a message decoded from Kafka cannot be stored as it is, or null: nested deeper than
 * MAX_JSON_DEPTH, or a string (keys too) holding a NUL or an unpaired surrogate. The ingress never sends
 * either; another producer could, and such a message must be dead-lettered, not retried forever.
 * `parse` is only called once the depth is known to be bounded; its result is returned for the caller.
 */
export function unstorableJson(text: string, parse: () => unknown): { reason: string } | { value: unknown } {
  if (jsonTooDeep(text)) return { reason: `nested deeper than ${MAX_JSON_DEPTH} levels` };
  const value = parse();
  if (!ESCAPED_NUL_OR_SURROGATE.test(text)) return { value };
  const bad = (v: unknown): boolean =>
    typeof v === 'string'
      ? v.includes('\u0000') || !v.isWellFormed()
      : typeof v === 'object' && v !== null && Object.entries(v).some(([k, x]) => bad(k) || bad(x));
  return bad(value) ? { reason: 'a string holds a NUL or an unpaired surrogate' } : { value };
}

/** The first `max` UTF-16 units of `s`, without splitting a surrogate pair (half a pair stores as U+FFFD). */
export function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  const last = s.charCodeAt(max - 1);
  return s.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
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
