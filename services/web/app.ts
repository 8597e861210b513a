// Builds the HTTP application for every route under one base URL: the ingress and API plugins, the
// OpenAPI document and /healthz. server.ts hosts both parts; either can be left out (WebParts).
import Fastify, { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { Config } from '../../shared/config.ts';
import { installJsonHandling } from '../../shared/http/server.ts';
import type { Logger } from '../../shared/logger.ts';
import { ingressPlugin } from '../ingress/app.ts';
import type { IngressDeps } from '../ingress/deps.ts';
import { apiPlugin } from '../api/app.ts';
import type { ApiDeps } from '../api/deps.ts';

export interface WebParts {
  ingress?: IngressDeps;
  api?: ApiDeps;
}

export async function buildWebApp(
  cfg: Pick<Config, 'trustProxy' | 'bodyLimit'>,
  log: Logger,
  parts: WebParts,
): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    // Per-request logs at tens of thousands of clicks/s would cost more than the clicks; errors are logged.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: cfg.trustProxy,
    bodyLimit: cfg.bodyLimit,
    return503OnClosing: true,
    requestIdHeader: 'x-request-id',
  });
  installJsonHandling(app);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'svc affiliate tracking',
        version: '1',
        description:
          'Tracking (click, lead, sale, refund), dashboard reads and management. Error bodies are `{ "error": string }`.',
      },
      tags: [
        { name: 'tracking', description: 'Integrator-facing tracking endpoints' },
        { name: 'auth', description: 'Dashboard sessions' },
        { name: 'dashboard', description: 'Dashboard reads (session)' },
        {
          name: 'management',
          description: 'Programs, partners, links, commissions, keys (session or affk_ key)',
        },
      ],
      components: {
        securitySchemes: {
          trackingToken: { type: 'http', scheme: 'bearer', description: 'Program tracking token, `aff_...`' },
          session: { type: 'http', scheme: 'bearer', description: 'Dashboard session, `sess_...`' },
          apiKey: { type: 'http', scheme: 'bearer', description: 'Management API key, `affk_...`' },
        },
      },
    },
  });
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }));
  if (parts.ingress) await app.register(ingressPlugin, parts.ingress);
  if (parts.api) await app.register(apiPlugin, parts.api);
  return app;
}
