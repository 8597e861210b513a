// The ingress as a Fastify plugin: stateless, validates, resolves links from the cache, mints ids and
// produces to Kafka. It owns no business writes. server.ts (services/web) creates the instance; tests
// register the same plugin.
import type { FastifyInstance } from 'fastify';
import type { BatchingProducer } from '../../shared/pipeline/kafka.ts';
import type { Snowflake } from '../../shared/domain/ids.ts';
import type { Sql } from '../../shared/db/sql.ts';
import type { OutcomeWaiter } from '../../shared/pipeline/outcomes.ts';
import type { LinkCache } from './link-cache.ts';
import type { RateLimiter } from './rate-limit.ts';
import { registerClickRoutes } from './routes/click.ts';
import { registerCommandRoutes } from './routes/commands.ts';
import { registerTrackerRoute } from './routes/tracker.ts';
import { registerPreflight } from './cors.ts';

export interface IngressDeps {
  sql: Sql;
  cache: LinkCache;
  producer: BatchingProducer;
  snowflake: Snowflake;
  waiter: OutcomeWaiter;
  topics: { clicks: string; sales: string; refunds: string };
  commandDeadlineMs: number;
  /** Per-IP limits on the browser-facing routes (click, lead). */
  rateLimiter: RateLimiter;
}

export async function ingressPlugin(app: FastifyInstance, deps: IngressDeps): Promise<void> {
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
  registerCommandRoutes(app, deps);
  registerTrackerRoute(app);
}
