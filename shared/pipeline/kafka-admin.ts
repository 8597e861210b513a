// The admin side of the Kafka module: the project's topics, created and converged at start; the readiness
// check of the broker; and KafkaAdmin, the few admin calls the project makes (topics, their metadata and
// offsets, a group's committed offsets and members, removing a dead member), over @platformatic/kafka's
// Admin, in the shapes the scripts and the evictor read.
import { Admin, Connection, metadataV12, parseBroker } from '@platformatic/kafka';
import type { Logger } from '../logger.ts';
import type { Config } from '../config.ts';
import { TOPICS, topicName } from '../contracts/topics.ts';
import type { TopicKey } from '../contracts/topics.ts';
import type { KafkaSettings } from './kafka-settings.ts';

export interface TopicSpec {
  topic: string;
  numPartitions: number;
  /** -1 (or absent): the broker's default. */
  replicationFactor?: number;
  configEntries?: { name: string; value: string }[];
  /** Each partition's replicas, its preferred leader first (a test placing leaders); then the count is its length. */
  replicaAssignment?: number[][];
}

export interface PartitionInfo {
  partitionId: number;
  /** -1: no leader now. */
  leader: number;
  replicas: number[];
  isr: number[];
}

export interface TopicInfo {
  name: string;
  partitions: PartitionInfo[];
}

export interface PartitionOffsets {
  partition: number;
  /** The end offset (the next message's), as `high`. */
  offset: string;
  high: string;
  low: string;
}

export interface GroupMemberInfo {
  memberId: string;
  clientId: string;
}

/** The admin calls the project makes, over one lazily connected @platformatic/kafka Admin. */
export class KafkaAdmin {
  private client: Admin | null = null;
  private readonly kafka: KafkaSettings;
  private readonly retries: number | undefined;

  constructor(kafka: KafkaSettings, opts: { retries?: number } = {}) {
    this.kafka = kafka;
    this.retries = opts.retries;
  }

  private get admin(): Admin {
    this.client ??= new Admin(this.kafka.options({ retries: this.retries }));
    return this.client;
  }

  /** Nothing to do: the client connects on its first request. Kept so that callers read as before. */
  async connect(): Promise<void> {}

  async disconnect(): Promise<void> {
    const c = this.client;
    this.client = null;
    await c?.close();
  }

  listTopics(): Promise<string[]> {
    return this.admin.listTopics();
  }

  /**
   * Creates each topic; one that exists already is not an error. `waitForLeaders`: resolves once every
   * partition has a leader (at most 30 s).
   */
  async createTopics(req: { topics: TopicSpec[]; waitForLeaders?: boolean }): Promise<void> {
    for (const t of req.topics) {
      await this.admin
        .createTopics({
          topics: [t.topic],
          ...(t.replicaAssignment
            ? {
                partitions: -1,
                replicas: -1,
                assignments: t.replicaAssignment.map((brokers, partition) => ({ partition, brokers })),
              }
            : { partitions: t.numPartitions, replicas: t.replicationFactor ?? -1 }),
          configs: t.configEntries ?? [],
        })
        .catch((err: unknown) => {
          if (!mentions(err, 'TOPIC_ALREADY_EXISTS')) throw err;
        });
    }
    if (!req.waitForLeaders) return;
    const names = req.topics.map((t) => t.topic);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const md = await this.fetchTopicMetadata({ topics: names }).catch(() => null);
      if (md?.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0)))
        return;
      if (Date.now() > deadline) throw new Error(`no leaders for ${names.join(', ')} after 30 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  deleteTopics(req: { topics: string[] }): Promise<void> {
    return this.admin.deleteTopics({ topics: req.topics });
  }

  /**
   * The topics' partitions, leaders and replicas, fresh from the cluster. Kafka's internal topics
   * (`__consumer_offsets`, whose leaders the cluster fault suite watches) are read with a Metadata request
   * of this module's own: the client's metadata leaves them out.
   */
  async fetchTopicMetadata(req: { topics: string[] }): Promise<{ topics: TopicInfo[] }> {
    if (req.topics.some((t) => t.startsWith('__'))) return { topics: await this.rawMetadata(req.topics) };
    const md = await this.admin.metadata({ topics: req.topics, forceUpdate: true });
    return {
      topics: req.topics.map((name) => {
        const t = md.topics.get(name);
        if (!t) throw new Error(`topic ${name} not found`);
        return {
          name,
          partitions: t.partitions.map((p, partitionId) => ({
            partitionId,
            leader: p.leader,
            replicas: p.replicas,
            isr: p.isr,
          })),
        };
      }),
    };
  }

  /** A Metadata request (v12) to the first bootstrap broker that answers. */
  private async rawMetadata(topics: string[]): Promise<TopicInfo[]> {
    let failure: unknown = new Error('no broker');
    for (const broker of this.kafka.brokers) {
      const { host, port } = parseBroker(broker);
      const connection = new Connection(this.kafka.clientId, {
        connectTimeout: 3_000,
        requestTimeout: 10_000,
      });
      // Its failures reach the awaited calls; unheard, an 'error' event would end the process.
      connection.on('error', () => {});
      try {
        await connection.connect(host, port);
        type Response = Awaited<ReturnType<typeof metadataV12.api.async>>;
        // A partition without a leader now (an election) is an error of the answer; the answer still says so.
        const md = await (metadataV12.api.async(connection, topics, false, false) as Promise<Response>).catch(
          (err: { response?: Response }) => {
            if (err.response && !err.response.topics.some((t) => t.errorCode !== 0)) return err.response;
            throw err;
          },
        );
        return topics.map((name) => {
          const t = md.topics.find((x) => x.name === name);
          if (!t) throw new Error(`topic ${name} not found`);
          return {
            name,
            partitions: [...t.partitions]
              .sort((a, b) => a.partitionIndex - b.partitionIndex)
              .map((p) => ({
                partitionId: p.partitionIndex,
                leader: p.leaderId,
                replicas: p.replicaNodes,
                isr: p.isrNodes,
              })),
          };
        });
      } catch (err) {
        failure = err;
      } finally {
        await connection.close().catch(() => {});
      }
    }
    throw failure;
  }

  /** Each partition's first and end offsets. */
  async fetchTopicOffsets(topic: string): Promise<PartitionOffsets[]> {
    const { topics } = await this.fetchTopicMetadata({ topics: [topic] });
    const ids = topics[0]!.partitions.map((p) => p.partitionId);
    const at = async (timestamp: bigint) => {
      const listed = await this.admin.listOffsets({
        topics: [{ name: topic, partitions: ids.map((partitionIndex) => ({ partitionIndex, timestamp })) }],
      });
      return new Map(listed[0]!.partitions.map((p) => [p.partitionIndex, p.offset]));
    };
    const [high, low] = await Promise.all([at(-1n), at(-2n)]);
    return ids.map((partition) => ({
      partition,
      offset: String(high.get(partition) ?? 0n),
      high: String(high.get(partition) ?? 0n),
      low: String(low.get(partition) ?? 0n),
    }));
  }

  /** A group's committed offsets of the topics (-1 where it committed none). */
  async fetchOffsets(req: {
    groupId: string;
    topics: string[];
  }): Promise<{ topic: string; partitions: { partition: number; offset: string }[] }[]> {
    const [group] = await this.admin.listConsumerGroupOffsets({ groups: [req.groupId] });
    return req.topics.map((topic) => ({
      topic,
      partitions: (group?.topics.find((t) => t.name === topic)?.partitions ?? []).map((p) => ({
        partition: p.partitionIndex,
        offset: String(p.committedOffset),
      })),
    }));
  }

  /** Moves an empty group's committed offsets of `topic` to each partition's beginning. */
  async resetOffsets(req: { groupId: string; topic: string; earliest: true }): Promise<void> {
    const offsets = await this.fetchTopicOffsets(req.topic);
    await this.admin.alterConsumerGroupOffsets({
      groupId: req.groupId,
      topics: [
        {
          name: req.topic,
          partitionOffsets: offsets.map((o) => ({ partition: o.partition, offset: BigInt(o.low) })),
        },
      ],
    });
  }

  /** The node id of the group's coordinator. */
  async groupCoordinator(groupId: string): Promise<number> {
    const [found] = await this.admin.findCoordinator({ keyType: 0, keys: [groupId] });
    return found!.nodeId;
  }

  /** The group's members now (empty when the group does not exist). */
  async describeGroup(groupId: string): Promise<GroupMemberInfo[]> {
    const groups = await this.admin.describeGroups({ groups: [groupId] });
    const g = groups.get(groupId);
    return [...(g?.members.values() ?? [])].map((m) => ({ memberId: m.id, clientId: m.clientId }));
  }

  /**
   * Sends the LeaveGroup a dead member could not send: the group rebalances at once instead of when the
   * member's session expires (shared/pipeline/liveness.ts, startEvictor).
   */
  removeGroupMember(req: { groupId: string; memberId: string }): Promise<void> {
    return this.admin.removeMembersFromConsumerGroup({
      groupId: req.groupId,
      members: [{ memberId: req.memberId, reason: 'stopped writing heartbeats' }],
    });
  }
}

/** Whether an error (or one of those it aggregates) names `what` (a protocol error's id). */
export function mentions(err: unknown, what: string): boolean {
  const seen = new Set<unknown>();
  const walk = (e: unknown): boolean => {
    if (!e || typeof e !== 'object' || seen.has(e)) return false;
    seen.add(e);
    const o = e as { apiId?: unknown; message?: unknown; errors?: unknown; cause?: unknown };
    if (o.apiId === what || (typeof o.message === 'string' && o.message.includes(what))) return true;
    if (Array.isArray(o.errors) && o.errors.some(walk)) return true;
    return walk(o.cause);
  };
  return walk(err);
}

/**
 * Creates the project's topics with explicit partition counts (the broker has auto-create off), the
 * replication factor KAFKA_REPLICATION_FACTOR and min.insync.replicas KAFKA_MIN_INSYNC_REPLICAS (unset:
 * the broker's defaults). A topic that exists is left as it is; one replicated less than configured is
 * reported once (a cluster that started as one broker: `kafka-reassign-partitions` fixes it).
 */
export async function ensureTopics(
  kafka: KafkaSettings,
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
  // Few retries per request: this loop is the retry, and a caller waits for Kafka around it.
  const admin = new KafkaAdmin(kafka, { retries: 2 });
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
    const wanted: TopicSpec[] = (Object.keys(TOPICS) as TopicKey[]).map((k) => ({
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
    // UNKNOWN_TOPIC_OR_PARTITION). Create what is missing, check leaders, repeat until the deadline. The
    // first listing is not caught: a broker that does not answer at all is the caller's to wait for.
    const deadline = Date.now() + 30_000;
    let first = true;
    for (;;) {
      const listing = admin.listTopics();
      const existing = new Set(first ? await listing : await listing.catch(() => [] as string[]));
      first = false;
      const missing = wanted.filter((t) => !existing.has(t.topic));
      if (missing.length > 0) {
        await admin
          .createTopics({ topics: missing })
          .then(() => log.info({ topics: missing.map((t) => t.topic) }, 'kafka topics created'))
          .catch((err: unknown) => log.debug({ err }, 'createTopics failed; checking again'));
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
export function kafkaCheck(kafka: KafkaSettings, topic: string): () => Promise<'ok' | string> {
  let admin: KafkaAdmin | null = null;
  return async () => {
    try {
      admin ??= new KafkaAdmin(kafka, { retries: 0 });
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
