// The ingress as a Fastify plugin: the tracking routes and their CORS preflights (docs/ingress.md).
// services/web/app.ts creates the Fastify instance and registers it beside the API.
import type { FastifyInstance } from 'fastify';
import { jsonBodyParser } from '../../shared/http/server.ts';
import type { IngressDeps } from './deps.ts';
import { registerClickRoutes } from './routes/click.ts';
import { registerLeadRoute } from './routes/lead.ts';
import { registerSaleRoute } from './routes/sale.ts';
import { registerRefundRoute } from './routes/refund.ts';
import { registerCliStatusRoute } from './routes/cli-status.ts';
import { registerDiscountRoute } from './routes/discount.ts';
import { registerProcessorWebhookRoute } from './routes/processor-webhook.ts';
import { registerTrackerRoute } from './routes/tracker.ts';
import { registerPreflight } from './cors.ts';

export async function ingressPlugin(app: FastifyInstance, deps: IngressDeps): Promise<void> {
  // The tracking routes read text/plain bodies as JSON too: the browser tracker (svc-tracker.js) and
  // navigator.sendBeacon post under that type so that no CORS preflight precedes each click. Everywhere
  // else a body must be application/json (shared/http/server.ts); this plugin's scope holds only the
  // tracking routes' POSTs (the processor webhooks take raw bodies in a scope of their own).
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, jsonBodyParser);
  app.addHook('onSend', async (_req, reply, payload) => {
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    return payload;
  });
  registerPreflight(
    app,
    ['/api/v1/track/click', '/api/tracking/click', '/api/v1/track/lead', '/api/tracking/lead'],
    deps.cache,
  );
  registerClickRoutes(app, deps);
  registerLeadRoute(app, deps);
  registerSaleRoute(app, deps);
  registerRefundRoute(app, deps);
  registerCliStatusRoute(app, deps);
  registerDiscountRoute(app, deps);
  registerTrackerRoute(app);
  registerProcessorWebhookRoute(app, {
    cache: deps.cache,
    producer: deps.producer,
    topic: deps.topics.processorEvents,
  });
}
