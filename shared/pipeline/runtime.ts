// The one process runtime: what every process (web and each worker) does around its own work. Config and
// logger; one Postgres pool, waited for at boot; Kafka: topics ensured and the producer connected, either
// before the process's work starts (a worker) or in the background while it already serves (web, whose API
// works without Kafka and whose tracking answers 503 until then); the operations server (/healthz, /readyz,
// /metrics); a status line every 10 s; graceful shutdown in one order. A process's `build` does only its own
// part (worker-runtime.ts for the workers, services/web/server.ts for web). docs/operations.md.
import type { KafkaClient } from './kafka.ts';
import type { Registry } from 'prom-client';
import { loadConfig } from '../config.ts';
import type { Config } from '../config.ts';
import { createLogger } from '../logger.ts';
import type { Logger } from '../logger.ts';
import { createSql, isConnectionError } from '../db/sql.ts';
import type { Sql } from '../db/sql.ts';
import {
  BatchingProducer,
  connectProducer,
  createKafka,
  ensureTopics,
  failsFast,
  kafkaCheck,
} from './kafka.ts';
import { topicName, TOPICS } from '../contracts/topics.ts';
import type { TopicKey } from '../contracts/topics.ts';
import { createRegistry, onShutdownSignal, startOpsServer } from '../http/ops.ts';
import type { Check, OpsServer } from '../http/ops.ts';
import { registerPipelineMetrics } from './metrics.ts';
import { describeError, waitForDependency } from './dependencies.ts';
import { memberName } from './liveness.ts';

/** A process's Kafka client id: the configured one, then its member name. */
export const kafkaClientIdOf = (configured: string, member: string) => `${configured}-${member}`;

export interface ProcessContext {
  cfg: Config;
  log: Logger;
  sql: Sql;
  kafka: KafkaClient;
  /** Connected before `build` (Kafka `first`), or refusing sends until Kafka answers (`background`). */
  producer: BatchingProducer;
  /** The prefixed topic names. */
  topics: Record<TopicKey, string>;
  /** This process's name in consumer_heartbeats and in its Kafka client id. */
  member: string;
  /**
   * What /readyz and /metrics serve: `build` may add checks and metrics. `accepting` is false once shutdown
   * began (web answers /readyz on its public port with the same three).
   */
  ops: { registry: Registry; checks: Record<string, Check>; accepting: () => boolean };
}

export interface ProcessParts {
  /** Figures for the status line since the last one; null when idle. */
  status?(): Record<string, unknown> | null;
  /** Called once the operations server listens: the process is up (its `running` line). */
  started?(): void;
  /**
   * Shutdown, after /readyz turned 503: stop taking work and finish what is in hand. The runtime then drains
   * the producer and closes Postgres and the operations server.
   */
  stop(): Promise<void>;
}

export interface ProcessDefinition {
  /** The logger's and the metrics' `process` name, and Postgres's application name (`svc-<name>`). */
  name: string;
  /** How the status lines name it (`<label> status`); `name` by default. */
  label?: string;
  poolSize(cfg: Config): number;
  /** `first`: Kafka is waited for before `build`; `background`: `build` runs at once. */
  kafka: 'first' | 'background';
  producer(cfg: Config): { lingerMs: number; maxBatch: number };
  /** The topic whose metadata /readyz's kafka check reads. */
  readinessTopic: TopicKey;
  build(ctx: ProcessContext): Promise<ProcessParts>;
}

export async function runProcess(def: ProcessDefinition): Promise<void> {
  const cfg = loadConfig();
  const log = createLogger(def.name, cfg.logLevel);
  const sql = createSql(cfg.databaseUrl, def.poolSize(cfg), `svc-${def.name}`, cfg.databaseConnectTimeoutMs);
  // An outage logs and waits instead of ending the process (docs/operations.md "Faults").
  process.on('unhandledRejection', (err) => log.error({ err }, 'unhandled rejection'));
  // Postgres first: nothing works without it. Started while it is down, a process waits and says so.
  await waitForDependency(log, 'postgres', () => sql`select 1`, { retryable: isConnectionError });
  // The process's name in consumer_heartbeats is also in its Kafka client id: a sibling that sees its
  // heartbeats stop finds it in the group by that (liveness.ts startEvictor).
  const member = memberName();
  const kafka = createKafka({ ...cfg, kafkaClientId: kafkaClientIdOf(cfg.kafkaClientId, member) }, log);
  const producer = new BatchingProducer(null, {
    ...def.producer(cfg),
    timeoutMs: cfg.produceTimeoutMs,
    failFast: failsFast(cfg),
    log,
  });
  let closing = false;
  const connect = () =>
    waitForDependency(
      log,
      'kafka',
      async () => {
        await ensureTopics(kafka, cfg, log);
        return connectProducer(kafka);
      },
      { stopped: () => closing },
    );
  if (def.kafka === 'first') producer.attach(await connect());
  else
    void connect()
      .then((p) => producer.attach(p))
      .catch((err: unknown) => log.debug({ reason: describeError(err) }, 'kafka producer not connected'));
  const topics = Object.fromEntries(
    (Object.keys(TOPICS) as TopicKey[]).map((k) => [k, topicName(cfg.kafkaPrefix, k)]),
  ) as Record<TopicKey, string>;
  const registry = createRegistry(def.name);
  registerPipelineMetrics(registry);
  const brokerCheck = kafkaCheck(kafka, topics[def.readinessTopic]);
  const ops: ProcessContext['ops'] = {
    registry,
    accepting: () => !closing,
    checks: {
      postgres: async () => (await sql`select 1`, 'ok'),
      // Ready for Kafka work only once the producer is connected (web serves before Kafka answers).
      kafka: async () => (producer.connected ? brokerCheck() : 'producer not connected yet'),
    },
  };
  const parts = await def.build({ cfg, log, sql, kafka, producer, topics, member, ops });
  const server: OpsServer | null =
    cfg.opsPort === null
      ? null
      : await startOpsServer({ host: cfg.httpHost, port: cfg.opsPort, log, ...ops });
  parts.started?.();

  const label = def.label ?? def.name;
  const status = setInterval(() => {
    const s = parts.status?.();
    if (s) log.info(s, `${label} status`);
  }, 10_000);

  // SIGTERM: readiness 503 at once; the process finishes what it has in hand (parts.stop), then the
  // producer drains (dead letters, effects, clicks) and the connections close. See onShutdownSignal for the
  // exit code and the bound.
  onShutdownSignal(log, async () => {
    closing = true;
    clearInterval(status);
    await parts.stop();
    await producer.close();
    await sql.end({ timeout: 5 });
    await server?.close();
  });
}
