// Pieces every HTTP service registers: the JSON body parser (exact "Invalid JSON body" 400; raw body kept
// for signature checks), one error handler (4xx with an `error` string, 5xx hiding internals), and the
// answer of a request no route takes: 405 with `Allow` for a path whose routes declare other methods,
// else 404. application/json is the only body type the service reads: any other is 415 (NOT_JSON), so no
// HTML form of another site (text/plain, urlencoded, multipart: no CORS preflight) reaches a handler. The
// two exceptions register their own parser in their own scope: the tracking routes also read text/plain
// (jsonBodyParser, services/ingress/app.ts) and the processor webhooks take any body raw.
import type { FastifyInstance, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import {
  BAD_STRING,
  ESCAPED_NUL_OR_SURROGATE,
  MAX_JSON_DEPTH,
  cleanStrings,
  isPlainObject,
  jsonTooDeep,
} from '../json.ts';
import { isConnectionError } from '../db/sql.ts';
import { HttpError } from '../http-error.ts';
import { recordRouteMethods } from './route-methods.ts';

declare module 'fastify' {
  interface FastifyRequest {
    rawBody?: string;
  }
}

export const UNPAIRED_SURROGATE = 'Invalid JSON body: a string contains an unpaired UTF-16 surrogate';
export const TOO_DEEP = `Invalid JSON body: nested deeper than ${MAX_JSON_DEPTH} levels`;

// Where the handlers take it from, beside the server that answers it.
export { HttpError };

export const DATABASE_UNAVAILABLE = 'The database is unreachable right now; retry shortly';

/** The 415 of a request body that is not application/json (docs/api.md "Request bodies and cross-site writes"). */
export const NOT_JSON = 'Content-Type must be application/json';

/**
 * Reads a body as JSON (as a string: `req.rawBody` keeps it for signature checks); an empty body is {}.
 * For `addContentTypeParser(types, { parseAs: 'string' }, jsonBodyParser)`.
 */
export function jsonBodyParser(
  req: FastifyRequest,
  body: string | Buffer,
  done: (err: Error | null, body?: unknown) => void,
): void {
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
}

/** The 405 body of a method the path does not declare (the `Allow` header lists the ones it does). */
export const methodNotAllowed = (method: string, path: string, allow: string[]) =>
  `Method ${method} is not allowed on ${path}; allowed: ${allow.join(', ')}`;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route reads its body raw, of any type (its own content-type parser): it never answers 415. */
    anyBodyType?: boolean;
  }
}

/**
 * Marks a preValidation step that answers 400 to a request without a body: its route's body is required.
 * Any other route with a body schema and no required field reads no body as {} (validation.ts), and its
 * OpenAPI says the body is optional (documentCommonAnswers, OPTIONAL_BODY).
 */
export function requiresBody<F extends (...args: never[]) => unknown>(step: F): F {
  return Object.assign(step, { requiresBody: true });
}

/** The route-schema key (copied into the operation) saying its request body may be left out. */
export const OPTIONAL_BODY = 'x-optional-body';

/**
 * @fastify/swagger's transformObject: an operation marked OPTIONAL_BODY gets `requestBody.required: false`
 * (the plugin writes `true` for every body schema) and a body that may be JSON null, and loses the mark.
 */
export function markOptionalBodies<D extends object>(document: D): D[keyof D] {
  const openapiObject = (document as { openapiObject?: unknown }).openapiObject;
  const doc = (openapiObject ?? {}) as { paths?: Record<string, Record<string, Record<string, unknown>>> };
  for (const ops of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(ops)) {
      if (op[OPTIONAL_BODY] === undefined) continue;
      delete op[OPTIONAL_BODY];
      const body = op.requestBody as { required?: boolean; content?: Record<string, { schema?: object }> };
      if (body === undefined) continue;
      body.required = false;
      // JSON null is read as no body (validation.ts).
      for (const media of Object.values(body.content ?? {})) {
        if (media.schema !== undefined) media.schema = { anyOf: [media.schema, { type: 'null' }] };
      }
    }
  }
  return openapiObject as D[keyof D];
}

/**
 * The OpenAPI document's `x-decimals: n` (a number with at most n decimals, checked exactly by the policy
 * and discount schemas' own walk: policy-schema.ts) also as JSON Schema's `multipleOf: 10^-n`, so a generated
 * client or a fuzzer knows the rule. Only the document: the validator never sees a float multipleOf.
 */
export function documentDecimals<T>(document: T): T {
  // A copy: the document's schema objects may be the routes' own.
  const copy = JSON.parse(JSON.stringify(document)) as T;
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node !== null && typeof node === 'object') {
      const o = node as Record<string, unknown>;
      const n = o['x-decimals'];
      if (typeof n === 'number' && o.multipleOf === undefined) o.multipleOf = Number(`1e-${n}`);
      Object.values(o).forEach(walk);
    }
  };
  walk(copy);
  return copy;
}

const RETRY_AFTER = {
  'retry-after': { type: 'integer', minimum: 0, description: 'Seconds to wait before retrying' },
} as const;

/**
 * What any route may answer whatever it does, written into each documented route's responses (where the
 * route does not describe the status itself) as installJsonHandling registers it: a body that is not JSON
 * (400), too large (413) or of another type (415) on a method that carries one, and a 503 when Postgres is
 * unreachable or the process is shutting down. The OpenAPI document then lists every status a route can give.
 */
export function documentCommonAnswers(route: {
  method: string | string[];
  schema?: { hide?: boolean; response?: unknown; body?: unknown; [OPTIONAL_BODY]?: boolean };
  config?: { anyBodyType?: boolean };
  preValidation?: unknown;
}): void {
  const schema = route.schema;
  if (schema === undefined || schema.hide === true) return;
  const body = schema.body as { required?: unknown[] } | undefined;
  const bodyRequired = [route.preValidation]
    .flat()
    .some((step) => (step as { requiresBody?: boolean } | undefined)?.requiresBody === true);
  if (body !== undefined && (body.required ?? []).length === 0 && !bodyRequired) schema[OPTIONAL_BODY] = true;
  // A copy: routes may share one response map (a GET's must not get a POST's statuses).
  const response = { ...(schema.response as Record<string, unknown> | undefined) };
  schema.response = response;
  const add = (status: number, description: string, extra: Record<string, unknown> = {}) => {
    if (response[status] === undefined) response[status] = { ...ERROR_SCHEMA, description, ...extra };
  };
  const withBody = [route.method].flat().some((m) => !['GET', 'HEAD', 'OPTIONS'].includes(m));
  if (withBody) {
    add(400, 'Invalid request: the JSON body or a field (the `error` says which)');
    add(413, '`Request body is too large`');
    if (route.config?.anyBodyType !== true) add(415, `\`${NOT_JSON}\``);
  }
  add(503, `\`${DATABASE_UNAVAILABLE}\`, or the service is shutting down; retry`, { headers: RETRY_AFTER });
}

/** Call on the root instance before any route or plugin is registered: the 405s read every route. */
export function installJsonHandling(app: FastifyInstance): void {
  const routes = recordRouteMethods(app);
  app.addHook('onRoute', documentCommonAnswers);
  // application/json only (its parameters, e.g. charset, are allowed): Fastify answers any other type, and a
  // body without a Content-Type, with FST_ERR_CTP_INVALID_MEDIA_TYPE (the 415 below) before reading it. A
  // request without a body (no Content-Type, no Content-Length or 0) needs no type. Content types are
  // checked after the onRequest hooks (the cross-site check, authentication) and before the body is read.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, jsonBodyParser);

  // A request no route takes is answered for its method and path, whatever its body (a body of JSON no
  // route would read may fail to parse first).
  const notFound = (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split('?')[0]!;
    const allow = routes.allowed(path);
    if (allow.length > 0 && !allow.includes(req.method)) {
      return reply
        .code(405)
        .header('allow', allow.join(', '))
        .send({ error: methodNotAllowed(req.method, path, allow) });
    }
    return reply.code(404).send({ error: `Route ${req.method} ${path} not found` });
  };

  app.setErrorHandler((err: FastifyError | HttpError, req, reply) => {
    if (req.is404) return notFound(req, reply);
    if (err instanceof HttpError) {
      return reply.code(err.statusCode).send({ error: err.message, ...err.extra });
    }
    const status = err.statusCode ?? 500;
    if (status === 413 || err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply.code(413).send({ error: 'Request body is too large' });
    }
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.code(415).send({ error: NOT_JSON });
    }
    if (err.validation) {
      return reply.code(400).send({ error: `Invalid request: ${err.message}` });
    }
    if (status >= 400 && status < 500) {
      return reply.code(status).send({ error: err.message });
    }
    if (isConnectionError(err)) {
      // Postgres unreachable (stopped, restarting): a clear 503 to retry, not a 500.
      req.log.warn({ code: (err as { code?: string }).code }, 'postgres unreachable');
      return reply.code(503).header('retry-after', '2').send({ error: DATABASE_UNAVAILABLE });
    }
    req.log.error({ err }, 'unhandled error');
    return reply.code(500).send({ error: 'Internal server error' });
  });

  // Also where a handler sends what it does not serve (reply.callNotFound(): the dashboard's catch-all).
  app.setNotFoundHandler(notFound);
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

export const BODY_NOT_OBJECT = 'Request body must be a JSON object';

/** The JSON object body; no body at all is {}; anything but an object is a 400. */
export function jsonBody(req: FastifyRequest): Record<string, unknown> {
  if (req.body === undefined || req.body === null) return {};
  if (!isPlainObject(req.body)) throw new HttpError(400, BODY_NOT_OBJECT);
  return req.body;
}

export const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The 503 of a request that found no answer within its bound (ANSWER_TIMEOUT_MS). */
export const NO_ANSWER_IN_TIME =
  'The request could not be answered in time; retry it (the same Idempotency-Key or event_id is counted once)';

/**
 * Callers get an answer, never a hang: a request that `applies` to and still has no reply after `ms` is
 * answered 503 with Retry-After. The handler's own answer, if it comes later, is dropped (Fastify sends one
 * reply). The bound sits above every wait the handlers bound themselves (PRODUCE_TIMEOUT_MS, then
 * COMMAND_DEADLINE_MS); it catches what they do not bound (a driver stalled on a dying connection).
 */
export function installAnswerBound(
  app: FastifyInstance,
  ms: number,
  applies: (req: FastifyRequest) => boolean,
): void {
  app.addHook('onRequest', (req, reply, done) => {
    if (applies(req)) {
      const timer = setTimeout(() => {
        if (reply.sent) return;
        req.log.warn({ url: req.url, ms }, 'no answer within the bound: 503');
        void reply.code(503).header('retry-after', '2').send({ error: NO_ANSWER_IN_TIME });
      }, ms);
      reply.raw.once('close', () => clearTimeout(timer));
    }
    done();
  });
}
