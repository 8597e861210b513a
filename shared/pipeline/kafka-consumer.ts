// The consumer side of the Kafka module, over @platformatic/kafka's Consumer: the messages it fetches are
// grouped per partition and handed to `handle` in chunks, one chunk per partition at a time and at most
// `partitionsConcurrency` partitions at once; a chunk's offset is committed only after `handle` returned (its
// Postgres transaction committed). A thrown error is retried with backoff; past the retries the consumer is
// replaced, and the chunk is redelivered from the committed offset. A messages stream the client ends (Kafka
// away past its retries) is opened again on the same client, as the same group member. Poison never throws: the steps
// dead-letter it (step-outcome.ts) with deadLetterMessage. Heartbeats are the client's own timer, so a slow
// chunk keeps its partitions (test/integration/consumer-slow-chunk.test.ts).
import { Consumer, MessagesStreamFallbackModes, MessagesStreamModes, findErrorBy } from '@platformatic/kafka';
import type {
  ConsumerOptions as ConsumerClientOptions,
  Message as KafkaMessage,
  MessagesStream,
} from '@platformatic/kafka';
import pRetry from 'p-retry';
import type { Logger } from '../logger.ts';
import { addLagSource, chunkRetries } from './metrics.ts';
import type { PartitionLag } from './metrics.ts';
import { describeError, isOutage, MAX_BACKOFF_MS, waitForDependency } from './dependencies.ts';
import type { KafkaSettings } from './kafka-settings.ts';
import type { Message } from './kafka-producer.ts';

/** A message's headers: a name given more than once has its values in an array. */
export type Headers = Record<string, Buffer | string | (Buffer | string)[] | undefined>;

export interface ConsumedMessage {
  topic: string;
  partition: number;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Headers | undefined;
  timestamp: string;
}

export interface ConsumerOptions {
  kafka: KafkaSettings;
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
   * leaves, is replaced or stops.
   */
  onMembership?: (partitions: number[] | null) => void;
}

export interface BatchConsumer {
  /** Stops consuming (the current consumer leaves its group) and stops replacing it. */
  disconnect(): Promise<void>;
}

/** Retries of a chunk whose failure is not an outage (maybe a bug): then the consumer is replaced. */
const CHUNK_RETRIES = 5;
/** How long a scrape waits for the end offsets (svc_consumer_lag_messages) before it takes the last ones. */
const LAG_READ_MS = 1_000;

/**
 * Runs a consumer and keeps one running: started while Kafka is down, it waits for it; when the client
 * gives up (a fetch failing past its retries, a chunk failing past its own) a new consumer is started the
 * same way, so an outage never ends the process (docs/operations.md "Faults").
 */
export async function runBatchConsumer(opts: ConsumerOptions): Promise<BatchConsumer> {
  let stopped = false;
  let current: GroupConsumer | null = null;
  let starting: Promise<void> | null = null;

  const startOne = async (): Promise<void> => {
    const c = GroupConsumer.create(opts, (err) => {
      // This one will not go on: replace it, without ending the process.
      if (stopped || current !== c) return;
      opts.log.warn({ reason: describeError(err) }, 'consumer stopped; starting a new one');
      current = null;
      void c.close().then(startInBackground, startInBackground);
    });
    try {
      current = c;
      await c.start();
    } catch (err) {
      if (current === c) current = null;
      await c.close().catch(() => {});
      throw err;
    }
  };
  // A consumer the client refuses to create (its settings) is no outage: the start fails at once.
  const startWaiting = () =>
    waitForDependency(opts.log, 'kafka (consumer)', startOne, {
      stopped: () => stopped,
      retryable: (err) => !(err instanceof ConsumerSettingsError),
    }).then(() => {});
  const startInBackground = () => {
    if (stopped) return;
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
      await current?.close();
      current = null;
    },
  };
}

/** One partition's messages waiting for `handle`, and what is known of its position. */
interface PartitionQueue {
  topic: string;
  partition: number;
  waiting: KafkaMessage[];
  /** The next offset expected from the stream: a message below it was seen already (a refetch). */
  next: bigint | null;
  /** The offset after the last committed chunk, for the lag gauge. */
  committed: bigint | null;
  busy: boolean;
  /** Bumped when the partition is taken away: a chunk in hand stops retrying, its commit is skipped. */
  generation: number;
}

/** The client's settings for a member of `opts.groupId` (exported for test/unit/consumer-settings.test.ts). */
export function consumerSettings(
  opts: Pick<ConsumerOptions, 'kafka' | 'groupId' | 'sessionTimeoutMs' | 'fetchMinBytes' | 'fetchMaxWaitMs'>,
) {
  return {
    ...opts.kafka.options(),
    groupId: opts.groupId,
    sessionTimeout: opts.sessionTimeoutMs,
    heartbeatInterval: heartbeatIntervalMs(opts),
    // How long the coordinator waits for every member to rejoin during a rebalance: 60 s, or the session
    // timeout when that is longer (the client refuses a shorter one).
    rebalanceTimeout: Math.max(60_000, opts.sessionTimeoutMs),
    maxBytesPerPartition: 4 * 1024 * 1024,
    minBytes: opts.fetchMinBytes ?? 1,
    maxWaitTime: opts.fetchMaxWaitMs ?? 100,
    autocommit: false,
  } satisfies ConsumerClientOptions<Buffer, Buffer, Buffer, Buffer>;
}

/** The client refused the consumer's settings: waiting for Kafka cannot fix that. */
export class ConsumerSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConsumerSettingsError';
  }
}

/** One member of the group: a @platformatic/kafka Consumer and its one messages stream. */
class GroupConsumer {
  /** A new member; the client's refusal of the settings is a ConsumerSettingsError. */
  static create(opts: ConsumerOptions, onGaveUp: (err: Error) => void): GroupConsumer {
    try {
      return new GroupConsumer(opts, onGaveUp);
    } catch (err) {
      throw new ConsumerSettingsError(`the Kafka consumer's settings: ${describeError(err)}`);
    }
  }

  private readonly opts: ConsumerOptions;
  private readonly onGaveUp: (err: Error) => void;
  private readonly consumer: Consumer;
  private stream: MessagesStream<Buffer, Buffer, Buffer, Buffer> | null = null;
  private closing = false;
  private readonly queues = new Map<string, PartitionQueue>();
  /** The partitions assigned at the last join, as `topic:partition`; null before the first. */
  private assigned: Set<string> | null = null;
  private buffered = 0;
  private active = 0;
  private pumpScheduled = false;
  private readonly highWater: number;
  private removeLagSource: (() => void) | null = null;
  /** The last lag read, and the reading in progress (one at a time, however often scraped). */
  private lag: PartitionLag[] = [];
  private lagReading: Promise<PartitionLag[]> | null = null;

  constructor(opts: ConsumerOptions, onGaveUp: (err: Error) => void) {
    this.opts = opts;
    this.onGaveUp = onGaveUp;
    this.highWater = Math.max(1000, opts.chunkSize * opts.partitionsConcurrency * 2);
    this.consumer = new Consumer(consumerSettings(opts));
    // A failed rejoin is emitted as 'error' (the client goes on trying); unheard, it would end the process.
    this.consumer.on('error', (err: Error) =>
      opts.log.debug({ reason: describeError(err) }, 'consumer error'),
    );
    this.consumer.on('consumer:heartbeat:error', (e: { error: Error }) =>
      opts.log.debug(
        { reason: describeError(e.error) },
        'heartbeat failed; the next one goes to the coordinator',
      ),
    );
    this.consumer.on(
      'consumer:group:join',
      (e: { assignments?: { topic: string; partitions: number[] }[] }) => this.joined(e.assignments ?? []),
    );
    this.consumer.on('consumer:group:leave', () => opts.onMembership?.(null));
  }

  async start(): Promise<void> {
    const stream = await this.consumer.consume({
      topics: this.opts.topics,
      // The committed offset; a partition with none starts at its beginning (kafkajs's fromBeginning).
      mode: MessagesStreamModes.COMMITTED,
      fallbackMode: MessagesStreamFallbackModes.EARLIEST,
      autocommit: false,
    });
    this.stream = stream;
    stream.on('data', (m: KafkaMessage) => this.received(m));
    stream.on('error', (err: Error) => this.streamEnded(stream, err));
    stream.on('close', () => this.streamEnded(stream, new Error('the messages stream closed')));
    this.removeLagSource ??= addLagSource(() => this.readLag());
  }

  /**
   * The client ended the messages stream: a fetch failed past its retries (the broker away longer than
   * they last). The same client opens another, as the member it was: its JoinGroup carries the member id,
   * so the coordinator gives it its partitions at once rather than waiting for an old member's session to
   * expire (a new consumer would be a new member). What the queues held is dropped, as on a rebalance, and
   * comes again from the committed offsets. Only a client that cannot consume at all is replaced.
   */
  private streamEnded(stream: MessagesStream<Buffer, Buffer, Buffer, Buffer>, err: Error): void {
    if (this.closing || this.stream !== stream) return;
    this.stream = null;
    for (const q of this.queues.values()) this.revoke(q);
    this.opts.log.warn(
      { reason: describeError(err), member: this.consumer.memberId },
      'messages stream ended; consuming again as the same member',
    );
    void stream.close().catch(() => {});
    waitForDependency(this.opts.log, 'kafka (consumer)', () => this.start(), {
      stopped: () => this.closing,
      // Kafka away (an error the client marks retryable): wait for it. Anything else: a new consumer.
      retryable: (e) => findErrorBy(e as Error, 'canRetry', true) !== null,
    }).catch((e: unknown) => {
      if (!this.closing) this.onGaveUp(e as Error);
    });
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.removeLagSource?.();
    for (const q of this.queues.values()) this.revoke(q);
    this.opts.onMembership?.(null);
    // Chunks in hand finish (their commits are skipped once revoked: they are redelivered to the next owner).
    while (this.active > 0) await new Promise((r) => setTimeout(r, 10));
    await this.stream?.close().catch(() => {});
    await this.consumer.close(true).catch(() => {});
  }

  private key = (topic: string, partition: number) => `${topic}:${partition}`;

  /** A new generation of the group: partitions no longer ours drop what they hold. */
  private joined(assignments: { topic: string; partitions: number[] }[]): void {
    const mine = assignments.filter((a) => this.opts.topics.includes(a.topic));
    this.assigned = new Set(mine.flatMap((a) => a.partitions.map((p) => this.key(a.topic, p))));
    for (const [k, q] of this.queues) if (!this.assigned.has(k)) this.revoke(q);
    this.opts.onMembership?.(mine.flatMap((a) => a.partitions));
  }

  private revoke(q: PartitionQueue): void {
    this.buffered -= q.waiting.length;
    q.waiting = [];
    q.next = null;
    q.committed = null;
    q.generation++;
    this.resumeIfDrained();
  }

  private received(m: KafkaMessage): void {
    const k = this.key(m.topic, m.partition);
    if (this.closing || (this.assigned !== null && !this.assigned.has(k))) return;
    let q = this.queues.get(k);
    if (!q) {
      q = {
        topic: m.topic,
        partition: m.partition,
        waiting: [],
        next: null,
        committed: null,
        busy: false,
        generation: 0,
      };
      this.queues.set(k, q);
    }
    // After a rejoin the stream fetches again from the committed offset: what is already in hand is not
    // taken twice.
    if (q.next !== null && m.offset < q.next) return;
    q.next = m.offset + 1n;
    q.waiting.push(m);
    if (++this.buffered >= this.highWater) this.stream?.pause();
    this.schedulePump();
  }

  private resumeIfDrained(): void {
    if (this.buffered < this.highWater / 2 && this.stream?.isPaused()) this.stream.resume();
  }

  // One turn later: a fetch's messages arrive together, and a chunk takes as many as it may.
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    for (const q of this.queues.values()) {
      if (this.active >= this.opts.partitionsConcurrency || this.closing) return;
      if (q.busy || q.waiting.length === 0) continue;
      const chunk = q.waiting.splice(0, this.opts.chunkSize);
      this.buffered -= chunk.length;
      this.resumeIfDrained();
      void this.apply(q, chunk);
    }
  }

  private async apply(q: PartitionQueue, raw: KafkaMessage[]): Promise<void> {
    this.active++;
    q.busy = true;
    const generation = q.generation;
    const owned = () => !this.closing && q.generation === generation;
    const chunk = raw.map(consumed);
    let lastOutageLog = 0;
    try {
      // An outage (Postgres away, a produce refused) is waited out for as long as this consumer owns the
      // partition, at most 0.5 s between attempts; anything else is retried CHUNK_RETRIES times, then the
      // consumer is replaced and the chunk redelivered from the committed offset.
      await pRetry(() => this.opts.handle(chunk), {
        forever: true,
        minTimeout: 200,
        maxTimeout: MAX_BACKOFF_MS,
        shouldRetry: (err) => owned() && (isOutage(err) || err.attemptNumber <= CHUNK_RETRIES),
        onFailedAttempt: (err) => {
          chunkRetries.inc({ topic: q.topic });
          const where = { attempt: err.attemptNumber, topic: q.topic, partition: q.partition };
          if (!isOutage(err)) this.opts.log.warn({ err, ...where }, 'chunk failed, retrying');
          else if (Date.now() - lastOutageLog >= 5_000) {
            lastOutageLog = Date.now();
            this.opts.log.warn({ reason: describeError(err), ...where }, 'chunk waiting for a dependency');
          }
        },
      });
      if (owned()) {
        const last = raw[raw.length - 1]!;
        // Committed with the generation the client holds now; during a rejoin, once it completes. A commit
        // refused (the partition moved meanwhile) leaves the chunk to be redelivered to its owner, once.
        await last.commit();
        q.committed = last.offset + 1n;
      }
    } catch (err) {
      if (owned()) {
        this.opts.log.warn(
          { reason: describeError(err), topic: q.topic, partition: q.partition },
          'chunk not committed',
        );
        // The rest of the partition must not be applied past an uncommitted chunk: start over from the
        // committed offset with a new consumer.
        if (!isCommitRefused(err)) this.onGaveUp(err as Error);
      }
    } finally {
      this.active--;
      q.busy = false;
      this.schedulePump();
    }
  }

  /**
   * svc_consumer_lag_messages, when scraped: each owned partition's end offset less the offset after its
   * last committed chunk. Waits at most LAG_READ_MS for the end offsets, else answers the last reading.
   */
  private async readLag(): Promise<PartitionLag[]> {
    const owned = [...this.queues.values()].filter((q) => q.committed !== null);
    if (owned.length === 0 || this.closing) return (this.lag = []);
    this.lagReading ??= this.consumer
      .listOffsets({ topics: [...new Set(owned.map((q) => q.topic))] })
      .then((ends) => {
        this.lag = owned.flatMap((q) => {
          const end = ends.get(q.topic)?.[q.partition];
          if (end === undefined || q.committed === null) return [];
          return [
            { topic: q.topic, partition: q.partition, messages: Math.max(0, Number(end - q.committed)) },
          ];
        });
        return this.lag;
      })
      .catch((err: unknown) => {
        this.opts.log.debug({ reason: describeError(err) }, 'end offsets not read');
        return this.lag;
      })
      .finally(() => (this.lagReading = null));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<PartitionLag[]>((resolve) => {
      timer = setTimeout(() => resolve(this.lag), LAG_READ_MS);
    });
    return Promise.race([this.lagReading, late]).finally(() => clearTimeout(timer));
  }
}

/** A commit the group refused because the member's generation is over: the chunk goes to the new owner. */
function isCommitRefused(err: unknown): boolean {
  const text = describeError(err);
  return /ILLEGAL_GENERATION|UNKNOWN_MEMBER_ID|REBALANCE_IN_PROGRESS|FENCED_INSTANCE_ID/.test(text);
}

/**
 * A tenth of the session, between 0.5 s and 3 s (the Java client's default): a member learns of a rebalance
 * from its next heartbeat's answer, so a long session (minutes) must not slow every rebalance with it.
 */
const heartbeatIntervalMs = (opts: Pick<ConsumerOptions, 'sessionTimeoutMs'>) =>
  Math.min(3_000, Math.max(500, Math.floor(opts.sessionTimeoutMs / 10)));

/** The message as the project reads it: header names as strings, offsets and timestamps as strings. */
function consumed(m: KafkaMessage): ConsumedMessage {
  let headers: Headers | undefined;
  for (const [k, v] of m.headerEntries ?? m.headers) {
    headers ??= {};
    const name = k.toString();
    const prev = headers[name];
    headers[name] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return {
    topic: m.topic,
    partition: m.partition,
    offset: String(m.offset),
    key: m.key ?? null,
    value: m.value ?? null,
    headers,
    timestamp: String(m.timestamp),
  };
}

/**
 * Reads `topic` from its beginning (a group of its own, nothing committed) and hands each message to `each`
 * until `close`: for tests and scripts that look at what was produced.
 */
export async function readTopic(
  kafka: KafkaSettings,
  o: { topic: string; groupId: string },
  each: (m: ConsumedMessage) => void,
): Promise<{ close(): Promise<void> }> {
  const consumer = new Consumer({ ...kafka.options(), groupId: o.groupId, autocommit: false });
  consumer.on('error', () => {});
  const stream = await consumer.consume({
    topics: [o.topic],
    mode: MessagesStreamModes.EARLIEST,
    autocommit: false,
  });
  stream.on('data', (m: KafkaMessage) => each(consumed(m)));
  stream.on('error', () => {});
  return {
    async close() {
      await stream.close().catch(() => {});
      await consumer.close(true).catch(() => {});
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
