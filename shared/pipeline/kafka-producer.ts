// The producer side of the Kafka module: acks all, one request in flight, the idempotent producer (see
// connectProducer). BatchingProducer sends whatever its callers queued during the previous request as one
// request (the client's own linger is per call); each send settles on the ack, and a circuit refuses sends
// while Kafka does not answer.
import { compatibilityPartitioner, ProduceAcks, Producer } from '@platformatic/kafka';
import type { Logger } from '../logger.ts';
import type { Config } from '../config.ts';
import { produceSeconds } from './metrics.ts';
import type { KafkaSettings } from './kafka-settings.ts';

/** A message to produce. Strings are sent as their UTF-8 bytes. */
export interface Message {
  key?: string | Buffer | null;
  value: string | Buffer | null;
  headers?: Record<string, string | Buffer>;
  /** Set only by tests that place a message on a given partition; otherwise the key decides. */
  partition?: number;
}

export interface SimpleProducerOptions {
  /**
   * The idempotent producer (default true): each partition's batches carry sequence numbers, so a retry of
   * a request the broker wrote but never answered is not written twice. test/integration/producer-lost-ack
   * holds it to never resolving a send it did not write.
   */
  idempotent?: boolean;
  /** Attempts per request; default the client's (KafkaSettings.options). */
  retries?: number;
}

const toBuffer = (v: string | Buffer): Buffer => (typeof v === 'string' ? Buffer.from(v) : v);

/**
 * A producer with acks all. Keys are placed as the Java client (and kafkajs's default partitioner) place
 * them, murmur2 of the key's bytes (compatibilityPartitioner): a key stays on the partition it was on
 * before the move from kafkajs (test/unit/partitioner.test.ts), and liveness.ts partitionOf agrees.
 */
export class SimpleProducer {
  private readonly producer: Producer;

  constructor(kafka: KafkaSettings, opts: SimpleProducerOptions = {}) {
    const idempotent = opts.idempotent ?? true;
    this.producer = new Producer({
      ...kafka.options({ retries: opts.retries }),
      idempotent,
      acks: ProduceAcks.ALL,
      partitioner: compatibilityPartitioner,
    });
  }

  /** Resolves once the cluster answers a metadata request (and, idempotent, gave this producer its id). */
  async connect(): Promise<void> {
    await this.producer.metadata({ topics: [] });
  }

  async send(req: { topic: string; messages: Message[] }): Promise<void> {
    await this.sendBatch({ topicMessages: [req] });
  }

  /** Resolves once every message was acknowledged by all in-sync replicas; rejects otherwise. */
  async sendBatch(req: {
    acks?: -1;
    topicMessages: { topic: string; messages: Message[] }[];
  }): Promise<void> {
    await this.producer.send({
      messages: req.topicMessages.flatMap(({ topic, messages }) =>
        messages.map((m) => ({
          topic,
          key: m.key === null || m.key === undefined ? undefined : toBuffer(m.key),
          value: m.value === null ? undefined : toBuffer(m.value),
          headers: m.headers
            ? new Map(Object.entries(m.headers).map(([k, v]) => [Buffer.from(k), toBuffer(v)]))
            : undefined,
          partition: m.partition,
        })),
      ),
    });
  }

  async disconnect(): Promise<void> {
    await this.producer.close();
  }
}

/** What BatchingProducer needs of a producer (a SimpleProducer; a fake in test/unit/produce-circuit.test.ts). */
export type Sender = Pick<SimpleProducer, 'sendBatch' | 'disconnect'>;

export async function connectProducer(kafka: KafkaSettings): Promise<SimpleProducer> {
  // Idempotent: a request the broker wrote whose answer was lost (the broker killed after the write, a
  // leader moving) is retried with the same sequence numbers and written once. kafkajs's idempotent mode
  // lost acknowledged messages here (it handed a failed batch's sequence numbers to the next batch, which
  // the broker then took for a duplicate); @platformatic/kafka starts a new producer id after a failed send
  // instead (test/integration/producer-lost-ack.test.ts). Retried at most 250 ms apart, about 10 s in all:
  // a send stuck while the broker is away (or, in a cluster, while a dead leader's partitions get new
  // leaders) goes through within a quarter second of its return (which closes the circuit below).
  const producer = new SimpleProducer(kafka, { idempotent: true, retries: 40 });
  await producer.connect();
  return producer;
}

/**
 * A send that Kafka did not acknowledge within the bound, or refused at once because the broker is known to
 * be unreachable (the circuit is open) or not connected yet. Callers answer 503 with Retry-After. A message
 * that timed out after it went out may still be written by the client's retries: consumers are idempotent.
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
 * (the client retrying it), every new send is refused at once (with one broker; with replicated topics it
 * waits instead, failFast); with nothing out, the next send goes out as the trial. The first acknowledged
 * request closes the circuit, so sends flow again within about a second of
 * the broker's return (the client retries at most 250 ms apart). docs/operations.md "Faults".
 */
export class BatchingProducer {
  private queue: Pending[] = [];
  private inFlight = false;
  private scheduled = false;
  private producer: Sender | null;
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
  constructor(producer: Sender | null, opts: BatchingProducerOptions) {
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

  /** Hands over the connected producer (a process that started while Kafka was down). */
  attach(producer: Sender): void {
    this.producer = producer;
    this.setBroken(false, 'connected');
    this.schedule();
  }

  /** Whether a producer was attached (readiness); the circuit may still be open. */
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
        // Still queued: it never goes out. Already sent: the client may still write it (hence event ids).
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
