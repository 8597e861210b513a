// The consumer side of the Kafka module: eachBatch without auto-resolve. A batch is handed to `handle` in
// chunks; a chunk's offsets are resolved and committed only after `handle` returned (its Postgres
// transaction committed). A thrown error is retried with backoff; past the retries it escapes to kafkajs,
// which restarts the consumer, and the chunk is redelivered. Poison never throws: the steps dead-letter it
// (step-outcome.ts) with deadLetterMessage.
import type { Consumer, IHeaders, Kafka, Message } from 'kafkajs';
import pRetry from 'p-retry';
import type { Logger } from '../logger.ts';
import { chunkRetries, consumerLag } from './metrics.ts';
import { describeError, isOutage, MAX_BACKOFF_MS, waitForDependency } from './dependencies.ts';
import { TRANSIENT } from './kafka-client.ts';

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
  /**
   * A fetch waits for this many bytes, up to `fetchMaxWaitMs` (default 1 byte, 100 ms: answered as soon as
   * anything is there). A worker that no caller waits for can take fewer, larger fetches.
   */
  fetchMinBytes?: number;
  fetchMaxWaitMs?: number;
  log: Logger;
  /** Handles one chunk; must be idempotent (at-least-once delivery). Throws only for infrastructure failures. */
  handle: (messages: ConsumedMessage[]) => Promise<void>;
  /**
   * Told the partitions assigned to it (of its topics) when the consumer joins its group, and null when it
   * leaves, crashes or stops.
   */
  onMembership?: (partitions: number[] | null) => void;
}

export interface BatchConsumer {
  /** Stops consuming (the current consumer leaves its group) and stops restarting it. */
  disconnect(): Promise<void>;
}

/** Retries of a chunk whose failure is not an outage (maybe a bug): then it escapes and is redelivered. */
const CHUNK_RETRIES = 5;

/**
 * Runs a consumer and keeps one running: started while Kafka is down, it waits for it; when kafkajs gives
 * up (a crash it does not restart from, e.g. the broker away past its retries) a new consumer is started
 * the same way, so an outage never ends the process (docs/operations.md "Faults").
 */
export async function runBatchConsumer(opts: ConsumerOptions): Promise<BatchConsumer> {
  let stopped = false;
  let current: Consumer | null = null;
  let starting: Promise<void> | null = null;

  const startOne = async (): Promise<Consumer> => {
    const consumer = createBatchConsumer(
      opts,
      () => stopped,
      (err) => {
        // kafkajs will not restart this one: replace it, without ending the process.
        if (stopped || current !== consumer) return;
        opts.log.warn({ reason: describeError(err) }, 'consumer stopped by kafkajs; starting a new one');
        current = null;
        void consumer.disconnect().catch(() => {});
        startInBackground();
      },
    );
    try {
      await consumer.connect();
      for (const topic of opts.topics) await consumer.subscribe({ topic, fromBeginning: true });
      current = consumer;
      await consumer.run(consumerRunConfig(opts));
      return consumer;
    } catch (err) {
      current = null;
      await consumer.disconnect().catch(() => {});
      throw err;
    }
  };
  const startWaiting = () =>
    waitForDependency(opts.log, 'kafka (consumer)', startOne, { stopped: () => stopped }).then(() => {});
  const startInBackground = () => {
    starting = startWaiting()
      .catch((err: unknown) => {
        if (!stopped) opts.log.error({ reason: describeError(err) }, 'consumer not restarted');
      })
      .finally(() => (starting = null));
  };

  await startWaiting();
  return {
    async disconnect() {
      stopped = true;
      await starting;
      await current?.disconnect();
      current = null;
    },
  };
}

function createBatchConsumer(
  opts: ConsumerOptions,
  stopped: () => boolean,
  onGaveUp: (err: Error) => void,
): Consumer {
  const consumer = opts.kafka.consumer({
    // kafkajs's default (5 retries), and no restart once disconnect() was called: a crash in flight at
    // the disconnect (a fetch failing as the connections close) would otherwise start it again, for ever.
    retry: { retries: 5, restartOnFailure: async () => !stopped() },
    groupId: opts.groupId,
    sessionTimeout: opts.sessionTimeoutMs,
    heartbeatInterval: heartbeatIntervalMs(opts),
    maxBytesPerPartition: 4 * 1024 * 1024,
    minBytes: opts.fetchMinBytes ?? 1,
    maxWaitTimeInMs: opts.fetchMaxWaitMs ?? 100,
    allowAutoTopicCreation: false,
  });
  consumer.on(consumer.events.CRASH, (e) => {
    const { error, restart } = e.payload as { error: Error; restart: boolean };
    if (restart && TRANSIENT.test(error.message))
      opts.log.debug({ err: error.message }, 'consumer restarting');
    else if (restart) opts.log.warn({ err: error.message }, 'consumer restarting after a retriable error');
    if (!restart) onGaveUp(error);
  });
  if (opts.onMembership) {
    const tell = opts.onMembership;
    consumer.on(consumer.events.GROUP_JOIN, (e) =>
      tell(opts.topics.flatMap((t) => e.payload.memberAssignment[t] ?? [])),
    );
    for (const e of [consumer.events.CRASH, consumer.events.STOP, consumer.events.DISCONNECT])
      consumer.on(e, () => tell(null));
  }
  return consumer;
}

const heartbeatIntervalMs = (opts: Pick<ConsumerOptions, 'sessionTimeoutMs'>) =>
  Math.max(500, Math.floor(opts.sessionTimeoutMs / 10));

/**
 * Runs `work`, calling kafkajs's `heartbeat` every `everyMs` until it settles. kafkajs sends one only when
 * the interval has passed and shares one request between concurrent callers (the partitions' batches of
 * a merged chunk all call it); a failed one (a rebalance under way) is left to the next batch to handle.
 */
export async function whileHeartbeating<T>(
  heartbeat: () => Promise<void>,
  everyMs: number,
  work: () => Promise<T>,
): Promise<T> {
  const timer = setInterval(() => void heartbeat().catch(() => {}), everyMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

function consumerRunConfig(opts: ConsumerOptions): Parameters<Consumer['run']>[0] {
  return {
    autoCommit: false,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: opts.partitionsConcurrency,
    eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }) => {
      const all = batch.messages;
      let lastOutageLog = 0;
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
        // An outage (Postgres away, a produce refused) is waited out for as long as this consumer owns the
        // partition, at most 0.5 s between attempts, heartbeating so that it keeps the partition; anything
        // else is retried CHUNK_RETRIES times, then escapes to kafkajs and the chunk is redelivered.
        // While a chunk is applied the consumer keeps heartbeating: a chunk slower than the session timeout
        // (a backlog applied event by event on a busy machine) would otherwise cost the consumer its
        // membership, its offsets commit would be refused and the whole chunk applied again, for ever.
        await whileHeartbeating(heartbeat, heartbeatIntervalMs(opts), () =>
          pRetry(() => opts.handle(chunk), {
            forever: true,
            minTimeout: 200,
            maxTimeout: MAX_BACKOFF_MS,
            shouldRetry: (err) =>
              isRunning() && !isStale() && (isOutage(err) || err.attemptNumber <= CHUNK_RETRIES),
            onFailedAttempt: async (err) => {
              chunkRetries.inc({ topic: batch.topic });
              const where = { attempt: err.attemptNumber, topic: batch.topic, partition: batch.partition };
              if (!isOutage(err)) opts.log.warn({ err, ...where }, 'chunk failed, retrying');
              else if (Date.now() - lastOutageLog >= 5_000) {
                lastOutageLog = Date.now();
                opts.log.warn({ reason: describeError(err), ...where }, 'chunk waiting for a dependency');
              }
            },
          }),
        );
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
  };
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
