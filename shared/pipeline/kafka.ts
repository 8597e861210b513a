// The project's producer and consumer over kafkajs 2.2.4 (unmaintained). Callers still see a few kafkajs
// types (Kafka, Message, IHeaders); the client is created, configured and logged only here.
//
// Producer: acks -1, one request in flight, NOT kafkajs's idempotent mode (see connectProducer). kafkajs has
// no linger, so BatchingProducer sends whatever its callers queued during the previous request as one
// request; each send settles on the ack.
//
// Consumer: eachBatch without auto-resolve. A batch is handed to `handle` in chunks; a chunk's offsets are
// resolved and committed only after `handle` returned (its Postgres transaction committed). A thrown error
// is retried with backoff; past the retries it escapes to kafkajs, which restarts the consumer, and the
// chunk is redelivered. Poison never throws: the steps dead-letter it (step-outcome.ts).
import { Kafka, logLevel as KafkaLogLevel } from 'kafkajs';
import type { Consumer, IHeaders, Message, Producer, ITopicConfig, logCreator } from 'kafkajs';
import pRetry from 'p-retry';
import { assertPatched, KAFKAJS } from '../dependency-fixes.ts';
import type { Logger } from '../logger.ts';
import type { Config } from '../config.ts';
import { TOPICS, topicName } from '../contracts/topics.ts';
import type { TopicKey } from '../contracts/topics.ts';
import { chunkRetries, consumerLag, produceSeconds } from './metrics.ts';
import { describeError, isOutage, MAX_BACKOFF_MS, waitForDependency } from './dependencies.ts';

// "Not the correct coordinator": the coordinator moved or is going away (a LeaveGroup that reaches a broker
// already shutting down, as after a Ctrl-C, which reaches the broker too); kafkajs looks it up again.
// A group of several members (replicas) rebalances whenever one joins or leaves: kafkajs logs the
// "rebalancing" answers to its heartbeats and syncs as errors, and then rejoins, as it should. "Not aware of
// this member": a consumer rejoining with its old member id (patches/kafkajs+2.2.4.patch) after the coordinator
// forgot it; kafkajs then joins as a new member. "Response without match": the answer to a request kafkajs
// had already given up on (a connection closed under it).
// `write after end`: a socket the broker closed while a request was written (its first seconds after a
// start), retried on a fresh connection; npm start's fresh broker showed it once per worker.
const TRANSIENT =
  /coordinator is loading|group coordinator is not available|not the correct coordinator|Restarting the consumer|group is rebalancing|not aware of this member|Response without match|write after end/i;
// The broker away (killed, restarting, not yet listening): kafkajs logs every attempt as an error with a
// stack. The project says it once instead (`waiting for kafka`, the producer's circuit), so debug here.
const OUTAGE =
  /ECONNREFUSED|ECONNRESET|Connection error|Connection timeout|Closed connection|KafkaJSConnection|Number of retries exceeded|retries exceeded|broker.*not connected|Failed to connect|disconnected|Crash: KafkaJS/i;

function pinoLogCreator(log: Logger): logCreator {
  return () =>
    ({ level, log: entry }) => {
      // Never a stack trace: kafkajs attaches one to ordinary connection errors.
      const { message, stack: _stack, ...extra } = entry as typeof entry & { stack?: unknown };
      // A group coordinator still loading (every fresh or restarted broker) makes kafkajs retry or restart
      // the consumer, which then succeeds: expected on every start, so debug, not a warning.
      const text = `${message} ${JSON.stringify(extra)}`;
      const transient = level <= KafkaLogLevel.WARN && (TRANSIENT.test(text) || OUTAGE.test(text));
      if (transient) log.debug(extra, `kafka: ${message}`);
      else if (level === KafkaLogLevel.ERROR) log.error(extra, `kafka: ${message}`);
      else if (level === KafkaLogLevel.WARN) log.warn(extra, `kafka: ${message}`);
      else if (level === KafkaLogLevel.INFO) log.debug(extra, `kafka: ${message}`);
      else log.trace(extra, `kafka: ${message}`);
    };
}

/**
 * The process's kafkajs client. Refuses to create one on a kafkajs without the project's fixes
 * (patches/kafkajs+2.2.4.patch; shared/dependency-fixes.ts), naming the missing fix.
 */
export function createKafka(cfg: Pick<Config, 'kafkaBrokers' | 'kafkaClientId'>, log: Logger): Kafka {
  assertPatched(KAFKAJS);
  process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
  return new Kafka({
    clientId: cfg.kafkaClientId,
    brokers: cfg.kafkaBrokers,
    logLevel: KafkaLogLevel.INFO,
    logCreator: pinoLogCreator(log),
    // At most 1 s between attempts (connects, metadata, consumer restarts): back within ~1 s of the broker.
    retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 8 },
  });
}

/**
 * Creates the project's topics with explicit partition counts (the broker has auto-create off), the
 * replication factor KAFKA_REPLICATION_FACTOR and min.insync.replicas KAFKA_MIN_INSYNC_REPLICAS (unset:
 * the broker's defaults). A topic that exists is left as it is; one replicated less than configured is
 * reported once (a cluster that started as one broker: `kafka-reassign-partitions` fixes it).
 */
export async function ensureTopics(
  kafka: Kafka,
  cfg: Pick<
    Config,
    | 'kafkaPrefix'
    | 'clickPartitions'
    | 'commandPartitions'
    | 'kafkaReplicationFactor'
    | 'kafkaMinInsyncReplicas'
  >,
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
      webhookEvents: cfg.commandPartitions,
      mail: cfg.commandPartitions,
    };
    const wanted: ITopicConfig[] = (Object.keys(TOPICS) as TopicKey[]).map((k) => ({
      topic: topicName(cfg.kafkaPrefix, k),
      numPartitions: partitions[k],
      replicationFactor: cfg.kafkaReplicationFactor ?? -1,
      configEntries:
        cfg.kafkaMinInsyncReplicas === null
          ? []
          : [{ name: 'min.insync.replicas', value: String(cfg.kafkaMinInsyncReplicas) }],
    }));
    let checkedReplication = false;
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
      const metadata = await admin
        .fetchTopicMetadata({ topics: wanted.map((t) => t.topic) })
        .catch(() => null);
      const ready =
        metadata?.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0)) ??
        false;
      if (ready && !checkedReplication) {
        checkedReplication = true;
        const rf = cfg.kafkaReplicationFactor;
        const under = metadata!.topics.filter(
          (t) => rf !== null && t.partitions.some((p) => p.replicas.length < rf),
        );
        if (under.length > 0)
          log.warn(
            { topics: under.map((t) => t.name), replicationFactor: rf },
            'kafka topics replicated less than KAFKA_REPLICATION_FACTOR (created before it was set)',
          );
      }
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
    // Not idempotent: kafkajs's idempotent mode loses acknowledged messages. When a request the broker
    // wrote is never answered (broker killed after the write) and kafkajs gives the send up, it hands the
    // batch's sequence numbers back; the next batch to that partition reuses them, and the broker answers
    // it as a duplicate of the written one without writing it (test/integration/producer-lost-ack.test.ts).
    // Without sequence numbers a retry may write a message twice instead, which every consumer already
    // absorbs: each applies a message once by its own id (event id, command id), as for a redelivery.
    // One request in flight keeps each partition in order through retries.
    idempotent: false,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    // Bounded and at most 250 ms apart: a send stuck in kafkajs's retries while the broker is away (or, in
    // a cluster, while a dead leader's partitions get new leaders) goes through within a quarter second of
    // its return (which closes the circuit below), and gives up after ~10 s.
    retry: { initialRetryTime: 100, maxRetryTime: 250, retries: 40 },
  });
  await producer.connect();
  return producer;
}

/**
 * A send that Kafka did not acknowledge within the bound, or refused at once because the broker is known to
 * be unreachable (the circuit is open) or not connected yet. Callers answer 503 with Retry-After. A message
 * that timed out after it went out may still be written by kafkajs's retries: consumers are idempotent.
 */
export class ProduceUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProduceUnavailableError';
  }
}

interface Pending {
  topic: string;
  message: Message;
  resolve: () => void;
  reject: (err: Error) => void;
  settled: boolean;
  timer: NodeJS.Timeout | null;
  /** performance.now() at send, for svc_produce_seconds. */
  at: number;
}

export interface BatchingProducerOptions {
  /** Told when the circuit opens (Kafka unreachable) and closes again: one line each. */
  log?: Logger;
  lingerMs: number;
  maxBatch: number;
  /** Longest wait for an acknowledgement before the send rejects (PRODUCE_TIMEOUT_MS). */
  timeoutMs: number;
  /**
   * Refuse new sends at once while the circuit is open and a request is still out (default true). False
   * with replicated topics (KAFKA_REPLICATION_FACTOR > 1): there a send that timed out is a partition's
   * leadership moving to another broker, which ends within seconds, so a new send waits for it (up to
   * timeoutMs) instead of being answered 503 at once. One broker: its death lasts until it is back.
   * `failsFast(cfg)` says which.
   */
  failFast?: boolean;
}

/** BatchingProducerOptions.failFast for this deployment: one copy of each topic (one broker), not replicated. */
export const failsFast = (cfg: Pick<Config, 'kafkaReplicationFactor'>): boolean =>
  (cfg.kafkaReplicationFactor ?? 1) <= 1;

/**
 * Fail fast: a send that times out or fails opens a circuit. While it is open and a request is still out
 * (kafkajs retrying it), every new send is refused at once (with one broker; with replicated topics it
 * waits instead, failFast); with nothing out, the next send goes out as the trial. The first acknowledged
 * request closes the circuit, so sends flow again within about a second of
 * the broker's return (kafkajs retries at most 1 s apart). docs/operations.md "Faults".
 */
export class BatchingProducer {
  private queue: Pending[] = [];
  private inFlight = false;
  private scheduled = false;
  private producer: Producer | null;
  private readonly lingerMs: number;
  private readonly maxBatch: number;
  private readonly timeoutMs: number;
  private readonly failFast: boolean;
  private readonly log: Logger | undefined;
  /** The circuit: true from a failed or timed-out send until the next acknowledged one. */
  private broken = false;
  /** Told the next time the circuit opens (whenUnavailable). */
  private readonly breakListeners = new Set<() => void>();
  /** Sends and messages, for the status line and the benchmark; refused and timedOut for the operator. */
  readonly stats = { sends: 0, messages: 0, refused: 0, timedOut: 0 };

  /** `producer` null: not connected yet (sends are refused until `attach`). */
  constructor(producer: Producer | null, opts: BatchingProducerOptions) {
    this.producer = producer;
    this.lingerMs = opts.lingerMs;
    this.maxBatch = opts.maxBatch;
    this.timeoutMs = opts.timeoutMs;
    this.failFast = opts.failFast ?? true;
    this.log = opts.log;
  }

  private setBroken(broken: boolean, reason: string): void {
    if (broken === this.broken) return;
    this.broken = broken;
    if (broken) this.log?.warn({ reason }, 'kafka unreachable: produces refused until it acknowledges again');
    else this.log?.info('kafka acknowledges again: produces flow');
    if (broken) {
      for (const tell of this.breakListeners) tell();
      this.breakListeners.clear();
    }
  }

  /**
   * Resolves the next time the circuit opens: a send timed out or failed, so Kafka (or, in a cluster, the
   * in-sync replicas of a partition) is not answering. A caller waiting on something that needs Kafka
   * (a worker's outcome) need not wait longer. `cancel` forgets the caller.
   */
  whenUnavailable(): { promise: Promise<void>; cancel(): void } {
    let tell: (() => void) | null = null;
    const promise = new Promise<void>((resolve) => {
      tell = resolve;
      this.breakListeners.add(resolve);
    });
    return { promise, cancel: () => void (tell && this.breakListeners.delete(tell)) };
  }

  /** Hands over the connected kafkajs producer (a process that started while Kafka was down). */
  attach(producer: Producer): void {
    this.producer = producer;
    this.setBroken(false, 'connected');
    this.schedule();
  }

  /** Whether a kafkajs producer was attached (readiness); the circuit may still be open. */
  get connected(): boolean {
    return this.producer !== null;
  }

  /** Whether sends are expected to go through: connected and the circuit closed. */
  get available(): boolean {
    return this.producer !== null && !this.broken;
  }

  /** Resolves once the broker acknowledged the message (acks=-1); rejects within `timeoutMs` otherwise. */
  send(topic: string, message: Message): Promise<void> {
    if (this.producer === null) return this.refuse('Kafka is not connected yet');
    if (this.broken && this.inFlight && this.failFast) return this.refuse('Kafka is unreachable');
    return new Promise((resolve, reject) => {
      const p: Pending = {
        topic,
        message,
        resolve,
        reject,
        settled: false,
        timer: null,
        at: performance.now(),
      };
      p.timer = setTimeout(() => {
        if (p.settled) return;
        p.settled = true;
        // Still queued: it never goes out. Already sent: kafkajs may still write it (hence event ids).
        const i = this.queue.indexOf(p);
        if (i >= 0) {
          this.queue.splice(i, 1);
          observeProduce([p], 'error');
        }
        this.setBroken(true, `no acknowledgement within ${this.timeoutMs} ms`);
        this.stats.timedOut++;
        reject(new ProduceUnavailableError(`Kafka did not acknowledge within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.queue.push(p);
      this.schedule();
    });
  }

  private refuse(reason: string): Promise<void> {
    this.stats.refused++;
    return Promise.reject(new ProduceUnavailableError(reason));
  }

  private schedule(): void {
    if (this.inFlight || this.scheduled || this.producer === null) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      void this.flush();
    };
    if (this.lingerMs > 0) setTimeout(run, this.lingerMs);
    else setImmediate(run);
  }

  private async flush(): Promise<void> {
    const producer = this.producer;
    if (this.inFlight || this.queue.length === 0 || producer === null) return;
    this.inFlight = true;
    const batch = this.queue.splice(0, this.maxBatch);
    const byTopic = new Map<string, Message[]>();
    for (const p of batch) {
      let list = byTopic.get(p.topic);
      if (!list) byTopic.set(p.topic, (list = []));
      list.push(p.message);
    }
    const settle = (p: Pending, err: Error | null) => {
      if (p.timer) clearTimeout(p.timer);
      if (p.settled) return;
      p.settled = true;
      if (err) p.reject(err);
      else p.resolve();
    };
    try {
      await producer.sendBatch({
        acks: -1,
        topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
      });
      this.setBroken(false, 'acknowledged');
      this.stats.sends++;
      this.stats.messages += batch.length;
      for (const p of batch) settle(p, null);
      observeProduce(batch, 'ok');
    } catch (err) {
      this.setBroken(true, (err as Error).message);
      const reason = new ProduceUnavailableError(`Kafka refused the send: ${(err as Error).message}`);
      for (const p of batch) settle(p, reason);
      observeProduce(batch, 'error');
    } finally {
      this.inFlight = false;
      // Whatever arrived during the request goes out now, as one request.
      if (this.queue.length > 0) void this.flush();
    }
  }

  async close(): Promise<void> {
    while (this.queue.length > 0 || this.inFlight) await new Promise((r) => setTimeout(r, 5));
    await this.producer?.disconnect();
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
