// The worker runtime, on the process runtime (runtime.ts: config, Postgres, Kafka, operations server, status
// line, shutdown): the consumer that owns offsets (chunks of several partitions merged, see coalesce.ts),
// its heartbeats and the eviction of dead siblings, the worker's periodic tasks, and its consume loop: the
// steps it states (message-steps.ts, the one chunk runner: parse → enrich → apply → dead letters, with step
// outcomes) or its own `handle` (the command handler). A worker's main.ts only wires its parts into `build`.
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { Sql } from '../db/sql.ts';
import { runBatchConsumer } from './kafka.ts';
import type { BatchingProducer, ConsumedMessage } from './kafka.ts';
import type { TopicKey } from '../contracts/topics.ts';
import { coalesce } from './coalesce.ts';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Metric, Registry } from 'prom-client';
import { pipelineLag } from './metrics.ts';
import { startEvictor, startHeartbeat } from './liveness.ts';
import { startPeriodic } from './periodic.ts';
import type { PeriodicTask, RunningTask } from './periodic.ts';
import { kafkaClientIdOf, runProcess } from './runtime.ts';
import type { ProcessContext } from './runtime.ts';
import { runSteps } from './message-steps.ts';
import type { MessageSteps } from './message-steps.ts';

export interface WorkerContext {
  cfg: Config;
  log: Logger;
  sql: Sql;
  producer: BatchingProducer;
  topics: Record<TopicKey, string>;
  /**
   * Starts work on a schedule of its own (periodic.ts: the outbox relay, sweeps of rows whose time has
   * come, delivery queues); the runtime stops it on shutdown, after the consumer and before `close`.
   */
  periodic(task: PeriodicTask): RunningTask;
}

export interface WorkerParts {
  /** The steps its topic's messages go through (a worker with a topic has these or `handle`). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each worker's own value type
  steps?: MessageSteps<any, object>;
  /** Applies a chunk of the topic's messages itself (the command handler). */
  handle?(messages: ConsumedMessage[]): Promise<void>;
  /** Figures for the status line, e.g. counts and latency percentiles since the last line; null when idle. */
  status?(): Record<string, unknown> | null;
  /** Releases what `build` opened (timers, files, a delivery queue), after the consumer and the periodic tasks stopped. */
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

/** Both status figures in one line; null when both are idle. */
function merged(
  a: Record<string, unknown> | null | undefined,
  b: Record<string, unknown> | null | undefined,
): Record<string, unknown> | null {
  return a || b ? { ...a, ...b } : null;
}

function chunkMetrics(registry: Registry) {
  return {
    chunkSize: new Histogram({
      name: 'svc_chunk_messages',
      help: 'Messages per applied chunk (several partitions merged)',
      buckets: [1, 5, 20, 50, 100, 200, 500, 1000],
      registers: [registry],
    }),
    applySeconds: new Histogram({
      name: 'svc_chunk_apply_seconds',
      help: 'Time to apply a chunk, its transaction included',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    messages: new Counter({ name: 'svc_messages_total', help: 'Messages applied', registers: [registry] }),
    joined: new Gauge({
      name: 'svc_consumer_joined',
      help: '1 while the consumer is a member of its group',
      registers: [registry],
    }),
  };
}

/** The consumer of the worker's topic: chunks through `handle`, offsets committed after it returned. */
async function consume(
  ctx: ProcessContext,
  def: WorkerDefinition & { topic: TopicKey },
  handle: (messages: ConsumedMessage[]) => Promise<void>,
) {
  const { cfg, log, sql, kafka, topics, member, ops } = ctx;
  const label = def.label ?? def.name;
  const group = `${cfg.kafkaPrefix}${def.name}`;
  const m = chunkMetrics(ops.registry);
  const apply = coalesce(handle, cfg.workerChunkSize, def.concurrentChunks?.(cfg) ?? 1);
  const measured = async (chunk: ConsumedMessage[]) => {
    const end = m.applySeconds.startTimer();
    await apply(chunk);
    end();
    const committed = Date.now();
    for (const msg of chunk) pipelineLag.observe(Math.max(0, committed - Number(msg.timestamp)) / 1000);
    m.chunkSize.observe(chunk.length);
    m.messages.inc(chunk.length);
  };
  let isJoined = false;
  // Which partitions this worker owns, for the ingress's fail-fast on commands nobody will apply.
  const heartbeat = startHeartbeat(sql, log, { group, topic: topics[def.topic], member });
  // A member whose heartbeats stopped is removed from the group by a live sibling (liveness.ts).
  const evictor = startEvictor({
    sql,
    log,
    heartbeat,
    group,
    admin: kafka.admin(),
    clientIdOf: (name) => kafkaClientIdOf(cfg.kafkaClientId, name),
  });
  const consumer = await runBatchConsumer({
    onMembership: (partitions) => {
      isJoined = partitions !== null;
      m.joined.set(isJoined ? 1 : 0);
      heartbeat.set(partitions);
      // Each (re)join, with what it was given: a worker counts as started (for the tests too) once it is.
      if (partitions !== null) log.info({ group, partitions }, `${label} joined its group`);
    },
    kafka,
    groupId: group,
    topics: [topics[def.topic]],
    chunkSize: cfg.workerChunkSize,
    partitionsConcurrency: cfg.workerPartitionsConcurrency,
    sessionTimeoutMs: cfg.kafkaSessionTimeoutMs,
    ...(def.batchFetches ? { fetchMinBytes: 64 * 1024, fetchMaxWaitMs: 200 } : {}),
    log,
    // Partitions' chunks merged into one transaction (see coalesce.ts), or into `concurrentChunks`;
    // chunkSize still bounds each.
    handle: measured,
  });
  ops.checks.consumer = async () => (isJoined ? 'ok' : 'not a member of its group yet');
  return {
    group,
    topic: topics[def.topic],
    async stop() {
      await evictor.stop();
      await consumer.disconnect();
      await heartbeat.stop();
    },
  };
}

export async function runWorker(def: WorkerDefinition): Promise<void> {
  const label = def.label ?? def.name;
  await runProcess({
    name: def.name,
    label,
    poolSize: (cfg) => Math.max(cfg.workerPartitionsConcurrency + 2, 4),
    kafka: 'first',
    producer: () => ({ lingerMs: 0, maxBatch: 1000 }),
    // A worker without a topic still produces (the relay): any topic's metadata tells.
    readinessTopic: def.topic ?? 'deadLetter',
    async build(ctx) {
      const { cfg, log, sql, producer, topics, ops } = ctx;
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
      // Once each: two parts may share a metric (the delivery queues' series are labelled by queue).
      for (const metric of new Set(parts.metrics)) ops.registry.registerMetric(metric);
      const steps = parts.steps
        ? runSteps(parts.steps, { sql, log, producer, deadLetterTopic: topics.deadLetter })
        : null;
      const handle = steps?.handle ?? parts.handle;
      if (def.topic !== undefined && !handle)
        throw new Error(`${def.name}: a worker with a topic needs steps`);
      const consumed =
        def.topic === undefined || !handle ? null : await consume(ctx, { ...def, topic: def.topic }, handle);
      return {
        status: () => merged(steps?.status(), parts.status?.()),
        started: () =>
          log.info(consumed ? { group: consumed.group, topic: consumed.topic } : {}, `${label} running`),
        // The consumer finishes its chunk in hand and commits its offsets before it leaves the group (the
        // rest is redelivered to the group); then the periodic tasks end their round, then `close`.
        async stop() {
          await consumed?.stop();
          await Promise.all(tasks.map((t) => t.stop()));
          await parts.close?.();
        },
      };
    },
  });
}
