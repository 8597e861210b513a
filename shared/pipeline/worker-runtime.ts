// The one worker runtime: config, Postgres, Kafka topics, the producer for dead letters and effects, the
// consumer that owns offsets (chunks of several partitions merged, see coalesce.ts), a status line every
// 10 s, graceful shutdown. A worker's main.ts only wires its steps into `build`.
import { loadConfig } from '../config.ts';
import type { Config } from '../config.ts';
import { createLogger } from '../logger.ts';
import type { Logger } from '../logger.ts';
import { createSql } from '../db/sql.ts';
import type { Sql } from '../db/sql.ts';
import {
  BatchingProducer,
  connectProducer,
  createKafka,
  ensureTopics,
  failsFast,
  runBatchConsumer,
} from './kafka.ts';
import { topicName, TOPICS } from '../contracts/topics.ts';
import type { ConsumedMessage } from './kafka.ts';
import type { TopicKey } from '../contracts/topics.ts';
import { coalesce } from './coalesce.ts';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Metric } from 'prom-client';
import { createRegistry, onShutdownSignal, startOpsServer } from '../http/ops.ts';
import type { OpsServer } from '../http/ops.ts';
import { kafkaCheck } from './kafka.ts';
import { pipelineLag, registerPipelineMetrics } from './metrics.ts';
import { waitForDependency } from './dependencies.ts';
import { isConnectionError } from '../db/sql.ts';
import { memberName, startEvictor, startHeartbeat } from './liveness.ts';
import { startPeriodic } from './periodic.ts';
import type { PeriodicTask, RunningTask } from './periodic.ts';

/** A worker's Kafka client id: the configured one, then its member name. */
const kafkaClientIdOf = (configured: string, member: string) => `${configured}-${member}`;

export interface WorkerContext {
  cfg: Config;
  log: Logger;
  sql: Sql;
  producer: BatchingProducer;
  topics: Record<TopicKey, string>;
  /**
   * Starts work on a schedule of its own (periodic.ts: the outbox relay, sweeps of rows whose time has
   * come); the runtime stops it on shutdown, after the consumer and before Postgres closes.
   */
  periodic(task: PeriodicTask): RunningTask;
}

export interface WorkerParts {
  /** Applies a chunk of the topic's messages (required when the worker has a topic). */
  handle?(messages: ConsumedMessage[]): Promise<void>;
  /** Figures for the status line, e.g. counts and latency percentiles since the last line; null when idle. */
  status?(): Record<string, unknown> | null;
  /** Releases what `build` opened (timers, files), after the consumer stopped and before Postgres closes. */
  close?(): Promise<void> | void;
  /** The worker's own metrics (created with `registers: []`), served on its /metrics with the pipeline's. */
  metrics?: Metric[];
}

export interface WorkerDefinition {
  /** Process and consumer-group name, e.g. `attribution-worker`. */
  name: string;
  /** How the log lines name the worker (`<label> running`, `<label> status`); `name` by default. */
  label?: string;
  /** The topic it consumes; none for a worker that only runs periodic tasks (the outbox relay). */
  topic?: TopicKey;
  /**
   * How many chunks may be applied at once, each in its own transaction (default 1: the partitions'
   * chunks merge into one transaction, since the command workers' transactions would serialise on the
   * rollup and balance rows anyway).
   */
  concurrentChunks?: (cfg: Config) => number;
  /**
   * For a worker no caller waits for (its topic's producers got their answer already): each fetch waits
   * up to 200 ms for 64 KiB, so a steady trickle is applied in fewer, larger chunks, with fewer requests
   * to the broker and transactions in Postgres. Default: a fetch is answered as soon as anything is there.
   */
  batchFetches?: boolean;
  build(ctx: WorkerContext): Promise<WorkerParts>;
}

export async function runWorker(def: WorkerDefinition): Promise<void> {
  const cfg = loadConfig();
  const log = createLogger(def.name, cfg.logLevel);
  const sql = createSql(cfg.databaseUrl, Math.max(cfg.workerPartitionsConcurrency + 2, 4), `svc-${def.name}`);
  // An outage logs and waits instead of ending the process (docs/operations.md "Faults").
  process.on('unhandledRejection', (err) => log.error({ err }, 'unhandled rejection'));
  // Started while a dependency is down: wait for it (one line every few seconds), never exit.
  await waitForDependency(log, 'postgres', () => sql`select 1`, { retryable: isConnectionError });
  // The process's name in consumer_heartbeats is also in its Kafka client id: a sibling that sees its
  // heartbeats stop finds it in the group by that (startEvictor).
  const member = memberName();
  const kafka = createKafka({ ...cfg, kafkaClientId: kafkaClientIdOf(cfg.kafkaClientId, member) }, log);
  const kafkaProducer = await waitForDependency(log, 'kafka', async () => {
    await ensureTopics(kafka, cfg, log);
    return connectProducer(kafka);
  });
  const producer = new BatchingProducer(kafkaProducer, {
    lingerMs: 0,
    maxBatch: 1000,
    timeoutMs: cfg.produceTimeoutMs,
    failFast: failsFast(cfg),
    log,
  });
  const topics = Object.fromEntries(
    (Object.keys(TOPICS) as TopicKey[]).map((k) => [k, topicName(cfg.kafkaPrefix, k)]),
  ) as Record<TopicKey, string>;
  const label = def.label ?? def.name;
  const tasks: RunningTask[] = [];
  const parts = await def.build({
    cfg,
    log,
    sql,
    producer,
    topics,
    periodic: (task) => {
      const running = startPeriodic(task, log);
      tasks.push(running);
      return running;
    },
  });
  const group = `${cfg.kafkaPrefix}${def.name}`;
  const registry = createRegistry(def.name);
  registerPipelineMetrics(registry);
  for (const m of parts.metrics ?? []) registry.registerMetric(m);
  let isJoined = false;
  /** The consumer of the worker's topic: chunks through `handle`, offsets committed after it returned. */
  async function consume(topic: TopicKey, handle: WorkerParts['handle']) {
    if (!handle) throw new Error(`${def.name}: a worker with a topic needs handle()`);
    const chunkSize = new Histogram({
      name: 'svc_chunk_messages',
      help: 'Messages per applied chunk (several partitions merged)',
      buckets: [1, 5, 20, 50, 100, 200, 500, 1000],
      registers: [registry],
    });
    const applySeconds = new Histogram({
      name: 'svc_chunk_apply_seconds',
      help: 'Time to apply a chunk, its transaction included',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
    const messages = new Counter({
      name: 'svc_messages_total',
      help: 'Messages applied',
      registers: [registry],
    });
    const joined = new Gauge({
      name: 'svc_consumer_joined',
      help: '1 while the consumer is a member of its group',
      registers: [registry],
    });
    const merged = coalesce(handle, cfg.workerChunkSize, def.concurrentChunks?.(cfg) ?? 1);
    const measured = async (chunk: ConsumedMessage[]) => {
      const end = applySeconds.startTimer();
      await merged(chunk);
      end();
      const committed = Date.now();
      for (const m of chunk) pipelineLag.observe(Math.max(0, committed - Number(m.timestamp)) / 1000);
      chunkSize.observe(chunk.length);
      messages.inc(chunk.length);
    };
    // Which partitions this worker owns, for the ingress's fail-fast on commands nobody will apply.
    const heartbeat = startHeartbeat(sql, log, { group, topic: topics[topic], member });
    // A member whose heartbeats stopped is removed from the group by a live sibling (liveness.ts).
    const evictor = startEvictor({
      sql,
      log,
      heartbeat,
      group,
      admin: kafka.admin(),
      clientIdOf: (m) => kafkaClientIdOf(cfg.kafkaClientId, m),
    });
    const consumer = await runBatchConsumer({
      onMembership: (partitions) => {
        isJoined = partitions !== null;
        joined.set(isJoined ? 1 : 0);
        heartbeat.set(partitions);
        // Each (re)join, with what it was given: a worker counts as started (for the tests too) once it is.
        if (partitions !== null) log.info({ group, partitions }, `${label} joined its group`);
      },
      kafka,
      groupId: group,
      topics: [topics[topic]],
      chunkSize: cfg.workerChunkSize,
      partitionsConcurrency: cfg.workerPartitionsConcurrency,
      sessionTimeoutMs: cfg.kafkaSessionTimeoutMs,
      ...(def.batchFetches ? { fetchMinBytes: 64 * 1024, fetchMaxWaitMs: 200 } : {}),
      log,
      // Partitions' chunks merged into one transaction (see coalesce.ts), or into `concurrentChunks`;
      // chunkSize still bounds each.
      handle: measured,
    });
    return { consumer, heartbeat, evictor, topic: topics[topic] };
  }
  const consumed = def.topic === undefined ? null : await consume(def.topic, parts.handle);
  let closing = false;
  const ops: OpsServer | null =
    cfg.opsPort === null
      ? null
      : await startOpsServer({
          host: cfg.httpHost,
          port: cfg.opsPort,
          log,
          registry,
          accepting: () => !closing,
          checks: {
            postgres: async () => (await sql`select 1`, 'ok'),
            // A worker without a topic still produces (the relay): any topic's metadata tells.
            kafka: kafkaCheck(kafka, consumed?.topic ?? topics.deadLetter),
            ...(consumed
              ? { consumer: async () => (isJoined ? 'ok' : 'not a member of its group yet') }
              : {}),
          },
        });
  log.info(consumed ? { group, topic: consumed.topic } : {}, `${label} running`);

  const status = setInterval(() => {
    const s = parts.status?.();
    if (s) log.info(s, `${label} status`);
  }, 10_000);

  // SIGTERM: readiness 503 at once; the consumer finishes its chunk in hand and commits its offsets before
  // it leaves the group (the rest is redelivered to the group); then the producer drains (dead letters,
  // effects) and the connections close. See onShutdownSignal for the exit code and the bound.
  onShutdownSignal(log, async () => {
    closing = true;
    clearInterval(status);
    await consumed?.evictor.stop();
    await consumed?.consumer.disconnect();
    await consumed?.heartbeat.stop();
    await Promise.all(tasks.map((t) => t.stop()));
    await parts.close?.();
    await producer.close();
    await sql.end({ timeout: 5 });
    await ops?.close();
  });
}
