// The service's OpenAPI document built offline: the same Fastify app the web process serves
// (services/web/app.ts), with dependencies that are never called, so that no Postgres, Kafka or port is
// needed. Route registration only reads the schemas; a dependency used while registering throws and names
// itself, so a route that starts needing one at registration is caught here rather than silently skipped.
import type { FastifyInstance } from 'fastify';
import { buildWebApp } from '../../services/web/app.ts';
import type { WebParts } from '../../services/web/app.ts';
import type { IngressDeps } from '../../services/ingress/deps.ts';
import { createLogger } from '../../shared/logger.ts';

/** A stand-in whose every property is another stand-in and which throws when called. */
function inert(name: string): never {
  const target = function () {};
  return new Proxy(target, {
    get: (_t, key) => (key === 'then' ? undefined : inert(`${name}.${String(key)}`)),
    apply: () => {
      throw new Error(`${name}() was called while building the OpenAPI document`);
    },
  }) as never;
}

/**
 * The web process's app (every route, the OpenAPI document, the 404/405 answers) on dependencies that are
 * never called: for what needs no Postgres, Kafka or port. The caller closes it.
 */
export async function buildOfflineWebApp(parts: Pick<WebParts, 'dashboard'> = {}): Promise<FastifyInstance> {
  const ingress: IngressDeps = {
    sql: inert('sql'),
    cache: inert('cache'),
    producer: inert('producer'),
    snowflake: inert('snowflake'),
    waiter: inert('waiter'),
    liveness: inert('liveness'),
    rateLimiter: inert('rateLimiter'),
    topics: { clicks: 'clicks', sales: 'sales', refunds: 'refunds', processorEvents: 'processor-events' },
    commandDeadlineMs: 5000,
  };
  return buildWebApp({ trustProxy: false, bodyLimit: 1 << 20 }, createLogger('openapi', 'error'), {
    ingress,
    api: { sql: inert('sql'), sessionTtlHours: 1, kafkaPrefix: 'svc.', publicUrl: 'http://127.0.0.1:8080' },
    ...parts,
  });
}

/** `GET /api/v1/openapi.json` as the web process answers it, built without servers. */
export async function buildOpenApiDocument(): Promise<Record<string, unknown>> {
  const app = await buildOfflineWebApp();
  try {
    await app.ready();
    // As JSON, the way it is served: the schemas also hold the validators' check functions.
    return JSON.parse(JSON.stringify(app.swagger())) as Record<string, unknown>;
  } finally {
    await app.close();
  }
}
