// Builds the HTTP application for every route under one base URL: the ingress and API plugins, the
// OpenAPI document, /healthz and /readyz, request metrics, and the dashboard SPA (dashboard.ts). server.ts hosts both parts.
import Fastify, { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { OpenAPIV3_1 } from 'openapi-types';
import type { Config } from '../../shared/config.ts';
import {
  documentDecimals,
  installAnswerBound,
  installJsonHandling,
  markOptionalBodies,
} from '../../shared/http/server.ts';
import type { Logger } from '../../shared/logger.ts';
import { ingressPlugin } from '../ingress/app.ts';
import type { IngressDeps } from '../ingress/deps.ts';
import { apiPlugin } from '../api/app.ts';
import type { ApiDeps } from '../api/deps.ts';
import { Counter, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import { readinessResponse } from '../../shared/http/ops.ts';
import type { Check } from '../../shared/http/ops.ts';
import { registerDashboard } from './dashboard.ts';
import { webhooksDocument } from '../../shared/views/events.ts';
import type { DashboardFiles } from './dashboard.ts';

export interface WebParts {
  ingress?: IngressDeps;
  api?: ApiDeps;
  /** Readiness checks for /readyz and the registry the request metrics go to. */
  ops?: { checks: Record<string, Check>; registry: Registry; accepting: () => boolean };
  /** The built dashboard (loadDashboard), null when not built (its pages answer 503); omitted: not served. */
  dashboard?: DashboardFiles | null;
}

export async function buildWebApp(
  cfg: Pick<Config, 'trustProxy' | 'bodyLimit'> & Partial<Pick<Config, 'answerTimeoutMs'>>,
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
  // Tracking and webhook calls are answered, never left hanging (docs/operations.md "Faults").
  if (cfg.answerTimeoutMs !== undefined) installAnswerBound(app, cfg.answerTimeoutMs, isTrackingWrite);
  await app.register(swagger, {
    transformObject: (d) => documentDecimals(markOptionalBodies(d)),
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
        {
          name: 'webhooks',
          description:
            'Outbound webhooks: endpoints, Standard Webhooks signatures, the delivery log (docs/webhooks.md)',
        },
        {
          name: 'partner auth',
          description: 'Partner accounts: sign-in, magic links, invites (docs/partners.md)',
        },
        { name: 'partner', description: 'The partner API: a partner session (psess_ or its cookie) only' },
        { name: 'public', description: 'Public program pages and applications (no credential)' },
      ],
      // The events svc sends to the advertiser's endpoints: each one's body, built from the objects' views.
      webhooks: webhooksDocument() as OpenAPIV3_1.Document['webhooks'],
      components: {
        securitySchemes: {
          trackingToken: { type: 'http', scheme: 'bearer', description: 'Program tracking token, `aff_...`' },
          session: { type: 'http', scheme: 'bearer', description: 'Dashboard session, `sess_...`' },
          sessionCookie: {
            type: 'apiKey',
            in: 'cookie',
            name: 'svc_session',
            description:
              'Dashboard session cookie (POST /api/auth/session); requests other than GET/HEAD/OPTIONS also send `X-CSRF-Token`',
          },
          apiKey: { type: 'http', scheme: 'bearer', description: 'Management API key, `affk_...`' },
          partnerSession: { type: 'http', scheme: 'bearer', description: 'Partner session, `psess_...`' },
          partnerSessionCookie: {
            type: 'apiKey',
            in: 'cookie',
            name: 'svc_partner_session',
            description:
              'Partner portal session cookie (POST /api/partner/auth/session); requests other than GET/HEAD/OPTIONS also send `X-CSRF-Token`',
          },
        },
      },
    },
  });
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }));
  const ops = parts.ops;
  if (ops) {
    // On the public port too, for load balancers and Kubernetes probes; /metrics stays on OPS_PORT.
    app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
      const a = await readinessResponse(ops.checks, ops.accepting);
      return reply.code(a.status).send(a.body);
    });
    const requests = new Counter({
      name: 'svc_http_requests_total',
      help: 'HTTP requests by route template, method and status',
      labelNames: ['route', 'method', 'status'],
      registers: [ops.registry],
    });
    const latency = new Histogram({
      name: 'svc_http_request_duration_seconds',
      help: 'HTTP request latency by route template and method',
      labelNames: ['route', 'method'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [ops.registry],
    });
    app.addHook('onResponse', async (req, reply) => {
      // Route templates only (bounded label values); anything unmatched shares one label.
      const route = req.routeOptions.url ?? 'unmatched';
      requests.inc({ route, method: req.method, status: String(reply.statusCode) });
      latency.observe({ route, method: req.method }, reply.elapsedTime / 1000);
    });
  }
  if (parts.ingress) await app.register(ingressPlugin, parts.ingress);
  if (parts.api) await app.register(apiPlugin, parts.api);
  if (parts.dashboard !== undefined) registerDashboard(app, parts.dashboard, log);
  return app;
}

/** The integrator-facing writes: click, lead, sale, refund (and their aliases) and processor webhooks. */
export function isTrackingWrite(req: { method: string; url: string }): boolean {
  return (
    req.method === 'POST' &&
    /^\/api\/(v1\/track|tracking)\/(click|lead|sale|refund)(\?|$)|^\/api\/v1\/webhooks\/processor\//.test(
      req.url,
    )
  );
}
