// Process entry for the HTTP service: the ingress and the API under one base URL, on the process runtime
// (shared/pipeline/runtime.ts: config, Postgres waited for, Kafka topics and the producer connected in the
// background so that tracking answers 503 until then, the operations server, shutdown).
// Its own boot: node id → tracking cache, outcome waiter, consumer liveness → the built dashboard's files →
// listen.
import type { FastifyListenOptions } from 'fastify';
import { MAX_NODE, Snowflake } from '../../shared/domain/ids.ts';
import { TrackingCache } from '../ingress/tracking-cache.ts';
import { RateLimiter } from '../ingress/rate-limit.ts';
import { OutcomeWaiter } from '../../shared/pipeline/outcomes.ts';
import { ConsumerLiveness } from '../../shared/pipeline/liveness.ts';
import { buildWebApp } from './app.ts';
import { loadDashboard } from './dashboard.ts';
import { registerLinkCacheMetrics } from '../../shared/pipeline/metrics.ts';
import { waitForDependency } from '../../shared/pipeline/dependencies.ts';
import { isConnectionError } from '../../shared/db/sql.ts';
import { runProcess } from '../../shared/pipeline/runtime.ts';

await runProcess({
  name: 'web',
  poolSize: (cfg) => cfg.databasePoolSize,
  // The API and the dashboard work without Kafka: web listens at once and tracking answers 503 until the
  // producer is connected (/readyz says `not ready: kafka` meanwhile).
  kafka: 'background',
  producer: (cfg) => ({ lingerMs: cfg.producerLingerMs, maxBatch: cfg.producerMaxBatch }),
  readinessTopic: 'clicks',
  async build({ cfg, log, sql, producer, topics, ops }) {
    const retryable = isConnectionError;
    const [row] = await waitForDependency(
      log,
      'postgres',
      () => sql<{ node: number }[]>`select (nextval('instance_node_seq') % ${MAX_NODE + 1})::int as node`,
      { retryable },
    );
    const node = row!.node;
    const cache = new TrackingCache(sql, log, { pollMs: cfg.cachePollMs, ttlMs: cfg.cacheTtlMs });
    await waitForDependency(log, 'postgres', () => cache.start(), { retryable });
    const waiter = new OutcomeWaiter(sql, log, { pollMs: cfg.outcomePollMs });
    await waitForDependency(log, 'postgres', () => waiter.start(), { retryable });
    const liveness = new ConsumerLiveness(sql, log, {
      [topics.clicks]: cfg.clickPartitions,
      [topics.sales]: cfg.commandPartitions,
      [topics.refunds]: cfg.commandPartitions,
      [topics.processorEvents]: cfg.commandPartitions,
    });
    liveness.start();
    registerLinkCacheMetrics(ops.registry, () => cache.stats);

    const app = await buildWebApp(cfg, log, {
      ops,
      ingress: {
        sql,
        cache,
        producer,
        snowflake: new Snowflake(node),
        waiter,
        liveness,
        topics: {
          clicks: topics.clicks,
          sales: topics.sales,
          refunds: topics.refunds,
          processorEvents: topics.processorEvents,
        },
        commandDeadlineMs: cfg.commandDeadlineMs,
        classifyClicks: cfg.classifyClicks,
        rateLimiter: new RateLimiter({
          perMinute: cfg.rateLimitPerMinute,
          burst: cfg.rateLimitBurst,
          exempt: cfg.rateLimitExempt,
        }),
      },
      api: {
        sql,
        sessionTtlHours: cfg.sessionTtlHours,
        kafkaPrefix: cfg.kafkaPrefix,
        publicUrl: cfg.publicUrl,
        publicOrigin: cfg.publicOrigin,
        webhookPolicy: cfg.webhooks,
        signInLimits: {
          ipPerMinute: cfg.authRateLimitIpPerMinute,
          failuresPerEmail: cfg.authFailuresPerEmail,
          failureWindowMs: cfg.authFailureWindowMs,
          magicLinkPerMinute: cfg.authRateLimitPerMinute,
          signupPerHour: cfg.signupRateLimitPerHour,
          exempt: cfg.authRateLimitExempt,
        },
        partnerLimits: {
          applyPerMinute: cfg.applyRateLimitPerMinute,
          exempt: cfg.rateLimitExempt,
        },
        imports: { secretKey: cfg.importSecretKey, csvMaxBytes: cfg.importCsvMaxBytes },
      },
      dashboard: await loadDashboard(),
    });
    // reusePort: Node's listen option (Linux), passed through by Fastify, whose type does not list it.
    const listenOptions: FastifyListenOptions & { reusePort?: boolean } = {
      host: cfg.httpHost,
      port: cfg.httpPort,
      ...(cfg.httpReusePort ? { reusePort: true } : {}),
    };
    const address = await app.listen(listenOptions);
    log.info({ address, node }, 'listening');

    return {
      // SIGTERM (readiness already 503 on both /readyz): Fastify stops accepting and answers the requests in
      // flight (each click waits for its Kafka acknowledgement, each lead/sale for its outcome or deadline),
      // then the cache, the waiter and the liveness reader stop; the runtime drains the producer after.
      async stop() {
        // app.close() closes the idle keep-alive connections once; a connection whose request was in flight
        // would then stay open until its keep-alive timeout (72 s), so close the idle ones until it is done.
        const idle = setInterval(() => app.server.closeIdleConnections(), 100);
        await app.close().finally(() => clearInterval(idle));
        await cache.stop();
        await waiter.stop();
        await liveness.stop();
      },
    };
  },
});
