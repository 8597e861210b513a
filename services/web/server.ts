// Process entry for the HTTP service: the ingress and the API under one base URL.
// Boot: config → Postgres (waited for) → node id → tracking cache, outcome waiter → the built dashboard's
// files → listen; Kafka topics and the producer connect in the background (tracking answers 503 until then).
import type { FastifyListenOptions } from 'fastify';
import { loadConfig } from '../../shared/config.ts';
import { createLogger } from '../../shared/logger.ts';
import { createSql } from '../../shared/db/sql.ts';
import {
  BatchingProducer,
  connectProducer,
  createKafka,
  ensureTopics,
  failsFast,
} from '../../shared/pipeline/kafka.ts';
import { topicName } from '../../shared/contracts/topics.ts';
import { MAX_NODE, Snowflake } from '../../shared/domain/ids.ts';
import { TrackingCache } from '../ingress/tracking-cache.ts';
import { RateLimiter } from '../ingress/rate-limit.ts';
import { OutcomeWaiter } from '../../shared/pipeline/outcomes.ts';
import { ConsumerLiveness } from '../../shared/pipeline/liveness.ts';
import { buildWebApp } from './app.ts';
import { loadDashboard } from './dashboard.ts';
import { createRegistry, onShutdownSignal, startOpsServer } from '../../shared/http/ops.ts';
import { kafkaCheck } from '../../shared/pipeline/kafka.ts';
import { registerLinkCacheMetrics, registerPipelineMetrics } from '../../shared/pipeline/metrics.ts';
import { describeError, waitForDependency } from '../../shared/pipeline/dependencies.ts';
import { isConnectionError } from '../../shared/db/sql.ts';

const cfg = loadConfig();
const log = createLogger('web', cfg.logLevel);
const sql = createSql(cfg.databaseUrl, cfg.databasePoolSize, 'svc-web');

let closing = false;
// An outage logs and waits instead of ending the process (docs/operations.md "Faults").
process.on('unhandledRejection', (err) => log.error({ err }, 'unhandled rejection'));
// Postgres first: nothing is served without it. Started while it is down, web waits and says so.
const [row] = await waitForDependency(
  log,
  'postgres',
  () => sql<{ node: number }[]>`select (nextval('instance_node_seq') % ${MAX_NODE + 1})::int as node`,
  { retryable: isConnectionError },
);
const node = row!.node;
const snowflake = new Snowflake(node);
const kafka = createKafka(cfg, log);
// Kafka in the background: until it is connected, produces are refused (tracking answers 503 +
// Retry-After) while the API and the dashboard work.
const producer = new BatchingProducer(null, {
  lingerMs: cfg.producerLingerMs,
  maxBatch: cfg.producerMaxBatch,
  timeoutMs: cfg.produceTimeoutMs,
  failFast: failsFast(cfg),
  log,
});
void waitForDependency(
  log,
  'kafka',
  async () => {
    await ensureTopics(kafka, cfg, log);
    return connectProducer(kafka);
  },
  { stopped: () => closing },
)
  .then((p) => producer.attach(p))
  .catch((err: unknown) => log.debug({ reason: describeError(err) }, 'kafka producer not connected'));
const cache = new TrackingCache(sql, log, { pollMs: cfg.cachePollMs, ttlMs: cfg.cacheTtlMs });
await waitForDependency(log, 'postgres', () => cache.start(), { retryable: isConnectionError });
const waiter = new OutcomeWaiter(sql, log, { pollMs: cfg.outcomePollMs });
await waitForDependency(log, 'postgres', () => waiter.start(), { retryable: isConnectionError });

const liveness = new ConsumerLiveness(sql, log, {
  [topicName(cfg.kafkaPrefix, 'clicks')]: cfg.clickPartitions,
  [topicName(cfg.kafkaPrefix, 'sales')]: cfg.commandPartitions,
  [topicName(cfg.kafkaPrefix, 'refunds')]: cfg.commandPartitions,
  [topicName(cfg.kafkaPrefix, 'processorEvents')]: cfg.commandPartitions,
});
liveness.start();

const registry = createRegistry('web');
registerPipelineMetrics(registry);
registerLinkCacheMetrics(registry, () => cache.stats);
const brokerCheck = kafkaCheck(kafka, topicName(cfg.kafkaPrefix, 'clicks'));
const checks = {
  postgres: async () => (await sql`select 1`, 'ok'),
  // Ready for tracking only once the producer is connected (web listens before Kafka answers).
  kafka: async () => (producer.connected ? brokerCheck() : 'producer not connected yet'),
};
const accepting = () => !closing;
const app = await buildWebApp(cfg, log, {
  ops: { checks, registry, accepting },
  ingress: {
    sql,
    cache,
    producer,
    snowflake,
    waiter,
    liveness,
    topics: {
      clicks: topicName(cfg.kafkaPrefix, 'clicks'),
      sales: topicName(cfg.kafkaPrefix, 'sales'),
      refunds: topicName(cfg.kafkaPrefix, 'refunds'),
      processorEvents: topicName(cfg.kafkaPrefix, 'processorEvents'),
    },
    commandDeadlineMs: cfg.commandDeadlineMs,
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
const ops =
  cfg.opsPort === null
    ? null
    : await startOpsServer({ host: cfg.httpHost, port: cfg.opsPort, log, registry, checks, accepting });
// SIGTERM: readiness 503 at once (both /readyz), Fastify stops accepting and answers the requests in flight
// (each click waits for its Kafka acknowledgement, each lead/sale for its outcome or deadline), then the
// rest closes. See onShutdownSignal for the exit code and the bound.
onShutdownSignal(log, async () => {
  closing = true;
  // app.close() closes the idle keep-alive connections once; a connection whose request was in flight
  // would then stay open until its keep-alive timeout (72 s), so close the idle ones until it is done.
  const idle = setInterval(() => app.server.closeIdleConnections(), 100);
  await app.close().finally(() => clearInterval(idle));
  cache.stop();
  await waiter.stop();
  liveness.stop();
  await producer.close();
  await sql.end({ timeout: 5 });
  await ops?.close();
});
