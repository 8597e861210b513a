// GET /js/svc-tracker.js: the browser tracker (spec 4.10), served from memory with a short cache.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

const SCRIPT = readFileSync(new URL('../public/svc-tracker.js', import.meta.url), 'utf8');

export function registerTrackerRoute(app: FastifyInstance): void {
  app.get(
    '/js/svc-tracker.js',
    {
      schema: {
        tags: ['tracking'],
        summary: 'The browser tracker script (data-program-id attribute)',
        response: {
          200: {
            description: 'The script',
            content: { 'application/javascript': { schema: { type: 'string' } } },
          },
        },
      },
    },
    async (_req, reply) =>
      reply
        .header('content-type', 'application/javascript; charset=utf-8')
        .header('cache-control', 'public, max-age=300')
        .header('access-control-allow-origin', '*')
        .send(SCRIPT),
  );
}
