// CORS for the browser-facing tracking routes (click, lead): only origins on the program's allowed_origins;
// calls without an Origin header are not browser calls and pass, and so do same-origin calls (a page served
// by this service itself: the dashboard's Integration test buttons). Sale and refund send no CORS headers.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../../shared/http/server.ts';
import type { CachedProgram, TrackingCache } from './tracking-cache.ts';

export function normaliseOrigin(origin: string): string {
  return origin.trim().replace(/\/+$/, '').toLowerCase();
}

/** Whether `origin` is the service's own origin (scheme and host as Fastify resolved them for the request). */
export function isSameOrigin(origin: string, protocol: string, host: string): boolean {
  return normaliseOrigin(origin) === normaliseOrigin(`${protocol}://${host}`);
}

export function checkOrigin(req: FastifyRequest, reply: FastifyReply, program: CachedProgram): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  // Not a cross-origin call: no other site's page can send it, and no CORS header is needed for it.
  if (isSameOrigin(origin, req.protocol, req.host)) return;
  const o = normaliseOrigin(origin);
  if (!program.allowedOrigins.some((a) => normaliseOrigin(a) === o)) {
    throw new HttpError(403, 'Origin not allowed for this program');
  }
  reply.header('access-control-allow-origin', origin);
  reply.header('vary', 'Origin');
}

/**
 * Preflights carry no body, so the program is not known yet: allow an origin listed by any program; the
 * actual request is then checked against its own program's list.
 */
export function registerPreflight(app: FastifyInstance, paths: string[], cache: TrackingCache): void {
  for (const path of paths) {
    app.options(path, { schema: { hide: true } }, async (req, reply) => {
      const origin = req.headers.origin;
      if (origin === undefined || !(await cache.originAllowedAnywhere(normaliseOrigin(origin)))) {
        return reply.code(403).send({ error: 'Origin not allowed' });
      }
      return reply
        .code(204)
        .header('access-control-allow-origin', origin)
        .header('access-control-allow-methods', 'POST, OPTIONS')
        .header('access-control-allow-headers', 'Content-Type, Authorization')
        .header('access-control-max-age', '600')
        .header('vary', 'Origin')
        .send();
    });
  }
}
