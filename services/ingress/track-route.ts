// Every tracking route is served at /api/v1/track/<name> and at its older /api/tracking/<name> alias.
import type { FastifyInstance, FastifySchema, RouteHandlerMethod } from 'fastify';
import { noValidation } from '../../shared/http/server.ts';

/** Registers both paths; bodies are validated by hand (exact error strings), the schema documents. */
export function registerTrackRoute(
  app: FastifyInstance,
  name: string,
  schema: FastifySchema,
  handler: RouteHandlerMethod,
): void {
  app.post(`/api/v1/track/${name}`, { schema, validatorCompiler: noValidation }, handler);
  app.post(
    `/api/tracking/${name}`,
    {
      schema: { ...schema, summary: `Compatibility alias of /api/v1/track/${name}`, deprecated: true },
      validatorCompiler: noValidation,
    },
    handler,
  );
}
