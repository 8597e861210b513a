// The project's producer and consumer over kafkajs 2.2.4 (unmaintained). Callers still see a few kafkajs
// types (Kafka, Message, IHeaders); the client is created, configured and logged only here.
//
// Producer: idempotent (acks -1), one request in flight. kafkajs has no linger, so BatchingProducer sends
// whatever its callers queued during the previous request as one request; each send settles on the ack.
//
// Consumer: eachBatch without auto-resolve. A batch is handed to `handle` in chunks; a chunk's offsets are
// resolved and committed only after `handle` returned (its Postgres transaction committed). A thrown error
// is retried with backoff; past the retries it escapes to kafkajs, which restarts the consumer, and the
// chunk is redelivered. Poison never throws: the steps dead-letter it (step-outcome.ts).
import { Kafka, logLevel as KafkaLogLevel } from 'kafkajs';
import type { Consumer, IHeaders, Message, Producer, ITopicConfig, logCreator } from 'kafkajs';
import pRetry from 'p-retry';
import type { Logger } from '../logger.ts';
import type { Config } from '../config.ts';
import { TOPICS, topicName } from '../contracts/topics.ts';
import type { TopicKey } from '../contracts/topics.ts';
import { chunkRetries, consumerLag, produceSeconds } from './metrics.ts';

const TRANSIENT = /coordinator is loading|group coordinator is not available|Restarting the consumer/i;
// kafkajs warns that bounded retries weaken Kafka's transactional exactly-once; svc does not use it (its
// exactly-once is the consumers' idempotency on event ids), and bounded retries are deliberate: a click
// whose produce fails is answered 500 instead of hanging while Kafka is down.
const EXPECTED = /Limiting retries for the idempotent producer/;

function pinoLogCreator(log: Logger): logCreator {
  return () =>
    ({ level, log: entry }) => {
      const { message, ...extra } = entry;
      // A group coordinator still loading (every fresh or restarted broker) makes kafkajs retry or restart
      // the consumer, which then succeeds: expected on every start, so debug, not a warning.
      const transient = level <= KafkaLogLevel.WARN && TRANSIENT.test(`${message} ${JSON.stringify(extra)}`);
      if (transient) log.debug(extra, `kafka: ${message}`);
      else if (level === KafkaLogLevel.ERROR) log.error(extra, `kafka: ${message}`);
      else if (level === KafkaLogLevel.WARN && !EXPECTED.test(message)) log.warn(extra, `kafka: ${message}`);
      else if (level === KafkaLogLevel.INFO) log.debug(extra, `kafka: ${message}`);
      else log.trace(extra, `kafka: ${message}`);
    };
}

export function createKafka(cfg: Pick<Config, 'kafkaBrokers' | 'kafkaClientId'>, log: Logger): Kafka {
  process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
  return new Kafka({
    clientId: cfg.kafkaClientId,
    brokers: cfg.kafkaBrokers,
    logLevel: KafkaLogLevel.INFO,
    logCreator: pinoLogCreator(log),
    retry: { initialRetryTime: 100, retries: 8 },
  });
}

/** Creates the project's topics with explicit partition counts (the broker has auto-create off). */
export async function ensureTopics(
  kafka: Kafka,
  cfg: Pick<Config, 'kafkaPrefix' | 'clickPartitions' | 'commandPartitions'>,
  log: Logger,
): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const partitions: Record<TopicKey, number> = {
      clicks: cfg.clickPartitions,
      sales: cfg.commandPartitions,
      refunds: cfg.commandPartitions,
      ledger: cfg.commandPartitions,
      notifications: cfg.commandPartitions,
      processorEvents: cfg.commandPartitions,
      deadLetter: 1,
    };
    const wanted: ITopicConfig[] = (Object.keys(TOPICS) as TopicKey[]).map((k) => ({
      topic: topicName(cfg.kafkaPrefix, k),
      numPartitions: partitions[k],
      replicationFactor: -1,
    }));
    // Converge rather than assume: several processes may be creating the same topics, and a topic that is
    // listed is not yet served until every partition has a leader (subscribing earlier fails with
    // UNKNOWN_TOPIC_OR_PARTITION). Create what is missing, check leaders, repeat until the deadline.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const existing = new Set(await admin.listTopics().catch(() => [] as string[]));
      const missing = wanted.filter((t) => !existing.has(t.topic));
      if (missing.length > 0) {
        await admin
          .createTopics({ topics: missing, waitForLeaders: false })
          .then(() => log.info({ topics: missing.map((t) => t.topic) }, 'kafka topics created'))
          .catch((err: Error) => log.debug({ err }, 'createTopics failed; checking again'));
      }
      const ready = await admin
        .fetchTopicMetadata({ topics: wanted.map((t) => t.topic) })
        .then((md) =>
          md.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0)),
        )
        .catch(() => false);
      if (ready) break;
      if (Date.now() > deadline) {
        throw new Error(`kafka topics not ready after 30 s: ${wanted.map((t) => t.topic).join(', ')}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await admin.disconnect();
  }
}

export async function connectProducer(kafka: Kafka): Promise<Producer> {
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  return producer;
}

interface Pending {
  topic: string;
  message: Message;
  resolve: () => void;
  reject: (err: Error) => void;
  /** performance.now() at send, for svc_produce_seconds. */
  at: number;
}

export class BatchingProducer {
  private queue: Pending[] = [];
  private inFlight = false;
  private scheduled = false;
  private readonly producer: Producer;
  private readonly lingerMs: number;
  private readonly maxBatch: number;
  /** Sends and messages, for the status line and the benchmark. */
  readonly stats = { sends: 0, messages: 0 };

  constructor(producer: Producer, opts: { lingerMs: number; maxBatch: number }) {
    this.producer = producer;
    this.lingerMs = opts.lingerMs;
    this.maxBatch = opts.maxBatch;
  }

  /** Resolves once the broker acknowledged the message (acks=-1). */
  send(topic: string, message: Message): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ topic, message, resolve, reject, at: performance.now() });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.inFlight || this.scheduled) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      void this.flush();
    };
    if (this.lingerMs > 0) setTimeout(run, this.lingerMs);
    else setImmediate(run);
  }

  private async flush(): Promise<void> {
    if (this.inFlight || this.queue.length === 0) return;
    this.inFlight = true;
    const batch = this.queue.splice(0, this.maxBatch);
    const byTopic = new Map<string, Message[]>();
    for (const p of batch) {
      let list = byTopic.get(p.topic);
      if (!list) byTopic.set(p.topic, (list = []));
      list.push(p.message);
    }
    try {
      await this.producer.sendBatch({
        acks: -1,
        topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
      });
      this.stats.sends++;
      this.stats.messages += batch.length;
      for (const p of batch) p.resolve();
      observeProduce(batch, 'ok');
    } catch (err) {
      for (const p of batch) p.reject(err as Error);
      observeProduce(batch, 'error');
    } finally {
      this.inFlight = false;
      // Whatever arrived during the request goes out now, as one request.
      if (this.queue.length > 0) void this.flush();
    }
  }

  async close(): Promise<void> {
    while (this.queue.length > 0 || this.inFlight) await new Promise((r) => setTimeout(r, 5));
    await this.producer.disconnect();
  }
}

function observeProduce(batch: Pending[], result: 'ok' | 'error'): void {
  const now = performance.now();
  for (const p of batch) produceSeconds.observe({ topic: p.topic, result }, (now - p.at) / 1000);
}

export interface ConsumedMessage {
  topic: string;
  partition: number;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: IHeaders | undefined;
  timestamp: string;
}

export interface ConsumerOptions {
  kafka: Kafka;
  groupId: string;
  topics: string[];
  chunkSize: number;
  partitionsConcurrency: number;
  sessionTimeoutMs: number;
  log: Logger;
  /** Handles one chunk; must be idempotent (at-least-once delivery). Throws only for infrastructure failures. */
  handle: (messages: ConsumedMessage[]) => Promise<void>;
  /** Told when the consumer joins its group (true) and when it leaves, crashes or stops (false). */
  onMembership?: (joined: boolean) => void;
  /** Called when kafkajs gives up (a crash it will not restart from); the process should exit. */
  onFatal: (err: Error) => void;
}

export async function runBatchConsumer(opts: ConsumerOptions): Promise<Consumer> {
  const consumer = opts.kafka.consumer({
    groupId: opts.groupId,
    sessionTimeout: opts.sessionTimeoutMs,
    heartbeatInterval: Math.max(500, Math.floor(opts.sessionTimeoutMs / 10)),
    maxBytesPerPartition: 4 * 1024 * 1024,
    maxWaitTimeInMs: 100,
    allowAutoTopicCreation: false,
  });
  consumer.on(consumer.events.CRASH, (e) => {
    const { error, restart } = e.payload as { error: Error; restart: boolean };
    if (restart && TRANSIENT.test(error.message))
      opts.log.debug({ err: error.message }, 'consumer restarting');
    else if (restart) opts.log.warn({ err: error.message }, 'consumer restarting after a retriable error');
    else opts.log.error({ err: error }, 'consumer crashed');
    if (!restart) opts.onFatal(error);
  });
  if (opts.onMembership) {
    const tell = opts.onMembership;
    consumer.on(consumer.events.GROUP_JOIN, () => tell(true));
    for (const e of [consumer.events.CRASH, consumer.events.STOP, consumer.events.DISCONNECT])
      consumer.on(e, () => tell(false));
  }
  await consumer.connect();
  for (const topic of opts.topics) await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: opts.partitionsConcurrency,
    eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }) => {
      const all = batch.messages;
      for (let i = 0; i < all.length; i += opts.chunkSize) {
        if (!isRunning() || isStale()) return;
        const chunk: ConsumedMessage[] = all.slice(i, i + opts.chunkSize).map((m) => ({
          topic: batch.topic,
          partition: batch.partition,
          offset: m.offset,
          key: m.key,
          value: m.value,
          headers: m.headers,
          timestamp: m.timestamp,
        }));
        await pRetry(() => opts.handle(chunk), {
          retries: 5,
          minTimeout: 200,
          maxTimeout: 5_000,
          onFailedAttempt: (err) => {
            chunkRetries.inc({ topic: batch.topic });
            opts.log.warn(
              { err, attempt: err.attemptNumber, topic: batch.topic, partition: batch.partition },
              'chunk failed, retrying',
            );
          },
        });
        const last = chunk[chunk.length - 1]!.offset;
        resolveOffset(last);
        await commitOffsetsIfNecessary({
          topics: [
            {
              topic: batch.topic,
              partitions: [{ partition: batch.partition, offset: (BigInt(last) + 1n).toString() }],
            },
          ],
        });
        consumerLag.set(
          { topic: batch.topic, partition: String(batch.partition) },
          Math.max(0, Number(BigInt(batch.highWatermark) - BigInt(last) - 1n)),
        );
        await heartbeat();
      }
    },
  });
  return consumer;
}

export interface DeadLetterInput {
  message: ConsumedMessage;
  step: string;
  reason: string;
}

/** Headers naming where a dead letter came from and why; the value and key are the original bytes. */
export function deadLetterMessage(d: DeadLetterInput): Message {
  return {
    key: d.message.key,
    value: d.message.value,
    headers: {
      'dlq-step': d.step,
      'dlq-reason': d.reason.slice(0, 1000),
      'dlq-source-topic': d.message.topic,
      'dlq-source-partition': String(d.message.partition),
      'dlq-source-offset': d.message.offset,
      'dlq-at': new Date().toISOString(),
    },
  };
}

/**
 * A readiness check of the broker: topic metadata through one admin client (reconnected after a failure).
 * The caller bounds how long it waits (shared/http/ops.ts).
 */
export function kafkaCheck(kafka: Kafka, topic: string): () => Promise<'ok' | string> {
  let admin: ReturnType<Kafka['admin']> | null = null;
  return async () => {
    try {
      admin ??= kafka.admin({ retry: { retries: 0 } });
      await admin.connect();
      await admin.fetchTopicMetadata({ topics: [topic] });
      return 'ok';
    } catch (err) {
      const a = admin;
      admin = null;
      void a?.disconnect().catch(() => {});
      return (err as Error).message || 'unreachable';
    }
  };
}
