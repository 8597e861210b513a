// The admin side of the Kafka module: the project's topics, created and converged at start, and the
// readiness check of the broker.
import type { ITopicConfig, Kafka } from 'kafkajs';
import type { Logger } from '../logger.ts';
import type { Config } from '../config.ts';
import { TOPICS, topicName } from '../contracts/topics.ts';
import type { TopicKey } from '../contracts/topics.ts';

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
      imports: cfg.commandPartitions,
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
