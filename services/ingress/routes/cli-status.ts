// GET /api/v1/cli/status, spec 4.9: the program a tracking token belongs to, for an integration check.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError, ERROR_SCHEMA } from '../../../shared/http/server.ts';
import { tokenIsLive } from '../commands/answer.ts';
import type { IngressDeps } from '../deps.ts';
import { requireTrackingToken } from '../auth.ts';

const cliStatusSchema = {
  tags: ['tracking'],
  summary: 'Program health check for a tracking token',
  security: [{ trackingToken: [] }] as Record<string, string[]>[],
  response: {
    200: {
      type: 'object',
      properties: {
        success: { type: 'boolean' },
        program: {
          type: 'object',
          properties: {
            id: { type: 'integer' },
            name: { type: 'string' },
            slug: { type: 'string' },
            status: { type: 'string' },
          },
        },
        api_token_masked: { type: ['string', 'null'] },
        server_time: { type: 'string', format: 'date-time' },
      },
    },
    401: ERROR_SCHEMA,
  },
};

export function registerCliStatusRoute(app: FastifyInstance, deps: IngressDeps): void {
  const { cache } = deps;
  app.get('/api/v1/cli/status', { schema: cliStatusSchema }, async (req: FastifyRequest) => {
    const programId = await requireTrackingToken(req, cache);
    // The cache may be a poll behind a regeneration or a deletion; an integration check is rare enough to
    // ask Postgres whether this is still the program's token (spec 4.8: the old token dies at once).
    const p = await cache.getProgram(programId);
    if (!p || p.deleted || !(await tokenIsLive(deps.sql, programId, req.trackingToken!.hash))) {
      throw new HttpError(401, 'Invalid tracking token');
    }
    return {
      success: true,
      program: { id: p.id, name: p.name, slug: p.slug, status: p.status },
      api_token_masked: p.apiTokenMasked,
      server_time: new Date().toISOString(),
    };
  });
}
