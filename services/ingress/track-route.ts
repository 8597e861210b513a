// Every tracking route is served at /api/v1/track/<name> and at its older /api/tracking/<name> alias; its
// TypeBox body schema validates (shared/http/validation.ts) and documents it.
import type { TSchema } from '@sinclair/typebox';
import type {
  FastifyInstance,
  FastifySchema,
  FastifySchemaCompiler,
  RouteHandlerMethod,
  preValidationAsyncHookHandler,
  preValidationHookHandler,
} from 'fastify';
import { typeBoxValidator } from '../../shared/http/validation.ts';
import type { RateLimiter } from './rate-limit.ts';

export interface TrackRoute {
  /** The OpenAPI description; `body` is the whole body the route accepts. */
  schema: FastifySchema & { body: TSchema };
  /**
   * The part of the body checked before the handler runs (default: all of it). A route whose answers to
   * authentication or the Idempotency-Key come before some body errors checks those fields itself, with
   * `bodyCheck` on the same schema pieces, at that point.
   */
  checkedFirst?: TSchema;
  /** Answers that come before any body error (the rate limit, the refund's token); after JSON parsing. */
  beforeBody?: preValidationHookHandler | preValidationAsyncHookHandler;
  handler: RouteHandlerMethod;
}

/** Registers both paths. */
export function registerTrackRoute(app: FastifyInstance, name: string, route: TrackRoute): void {
  const { schema, checkedFirst, beforeBody, handler } = route;
  const validatorCompiler: FastifySchemaCompiler<FastifySchema> = (part) =>
    typeBoxValidator({
      ...part,
      schema: part.httpPart === 'body' ? (checkedFirst ?? schema.body) : (part.schema as TSchema),
    });
  const options = { validatorCompiler, ...(beforeBody ? { preValidation: beforeBody } : {}) };
  app.post(`/api/v1/track/${name}`, { schema, ...options }, handler);
  app.post(
    `/api/tracking/${name}`,
    {
      schema: { ...schema, summary: `Compatibility alias of /api/v1/track/${name}`, deprecated: true },
      ...options,
    },
    handler,
  );
}

/** The per-IP rate limit of click and lead: a 429 comes before any body error, as it always has. */
export function rateLimited(deps: { rateLimiter: RateLimiter }): preValidationHookHandler {
  // A callback, not an async function: no promise per click.
  return (req, reply, done) => {
    try {
      deps.rateLimiter.check(req, reply);
    } catch (err) {
      done(err as Error);
      return;
    }
    done();
  };
}
