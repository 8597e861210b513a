// The one worker runtime: config, Postgres, Kafka topics, the producer for dead letters and effects, the
// consumer that owns offsets (chunks of several partitions merged, see coalesce.ts), a status line every
// 10 s, graceful shutdown. A worker's main.ts only wires its steps into `build`.
import { loadConfig } from '../config.ts';
import type { Config } from '../config.ts';
import { createLogger } from '../logger.ts';
import type { Logger } from '../logger.ts';
import { createSql } from '../db/sql.ts';
import type { Sql } from '../db/sql.ts';
import { BatchingProducer, connectProducer, createKafka, ensureTopics, runBatchConsumer } from './kafka.ts';
import { topicName, TOPICS } from '../contracts/topics.ts';
import type { ConsumedMessage } from './kafka.ts';
import type { TopicKey } from '../contracts/topics.ts';
import { coalesce } from './coalesce.ts';

export interface WorkerContext {
  cfg: Config;
  log: Logger;
  sql: Sql;
  producer: BatchingProducer;
  topics: Record<TopicKey, string>;
}

export interface WorkerParts {
  handle(messages: ConsumedMessage[]): Promise<void>;
  /** Figures for the status line, e.g. counts and latency percentiles since the last line; null when idle. */
  status?(): Record<string, unknown> | null;
  /** Releases what `build` opened (timers, files), after the consumer stopped and before Postgres closes. */
  close?(): Promise<void> | void;
}

export interface WorkerDefinition {
  /** Process and consumer-group name, e.g. `attribution-worker`. */
  name: string;
  /** How the log lines name the worker (`<label> running`, `<label> status`); `name` by default. */
  label?: string;
  topic: TopicKey;
  build(ctx: WorkerContext): Promise<WorkerParts>;
}

export async function runWorker(def: WorkerDefinition): Promise<void> {
  const cfg = loadConfig();
  const log = createLogger(def.name, cfg.logLevel);
  const sql = createSql(cfg.databaseUrl, Math.max(cfg.workerPartitionsConcurrency + 2, 4), `svc-${def.name}`);
  const kafka = createKafka(cfg, log);
  await ensureTopics(kafka, cfg, log);
  const producer = new BatchingProducer(await connectProducer(kafka), { lingerMs: 0, maxBatch: 1000 });
  const topics = Object.fromEntries(
    (Object.keys(TOPICS) as TopicKey[]).map((k) => [k, topicName(cfg.kafkaPrefix, k)]),
  ) as Record<TopicKey, string>;
  const label = def.label ?? def.name;
  const parts = await def.build({ cfg, log, sql, producer, topics });
  const group = `${cfg.kafkaPrefix}${def.name}`;
  const consumer = await runBatchConsumer({
    kafka,
    groupId: group,
    topics: [topics[def.topic]],
    chunkSize: cfg.workerChunkSize,
    partitionsConcurrency: cfg.workerPartitionsConcurrency,
    sessionTimeoutMs: cfg.kafkaSessionTimeoutMs,
    log,
    // Partitions' chunks merged into one transaction (see coalesce.ts); chunkSize still bounds each.
    handle: coalesce(parts.handle, cfg.workerChunkSize),
    onFatal: () => process.exit(1),
  });
  log.info({ group, topic: topics[def.topic] }, `${label} running`);

  const status = setInterval(() => {
    const s = parts.status?.();
    if (s) log.info(s, `${label} status`);
  }, 10_000);

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down');
    clearInterval(status);
    await consumer.disconnect();
    await parts.close?.();
    await producer.close();
    await sql.end({ timeout: 5 });
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
