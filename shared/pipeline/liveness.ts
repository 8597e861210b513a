// Which partitions a live worker owns. Every worker writes its group assignment to consumer_heartbeats
// every HEARTBEAT_MS; the ingress reads the live rows, and a lead, sale or refund whose partition no live
// worker owns (a killed or restarting worker, or Postgres away) is answered 503 after ORPHAN_GRACE_MS
// instead of at COMMAND_DEADLINE_MS. Why and the limits: docs/operations.md "Faults".
// The same rows let a worker's siblings remove a dead one from their group (startEvictor): its partitions
// then go to them after EVICT_AFTER_MS instead of the Kafka session timeout (docs/scaling.md).
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { compatibilityPartitioner } from '@platformatic/kafka';
import type { KafkaAdmin } from './kafka-admin.ts';
import type { Sql } from '../db/sql.ts';
import type { Logger } from '../logger.ts';
import { startPeriodic } from './periodic.ts';
import type { RunningTask } from './periodic.ts';

export const HEARTBEAT_MS = 500;
/** A heartbeat older than this is a dead worker (4 missed beats: an event-loop stall is not a death). */
export const STALE_MS = 2_000;
/** How long a command waits on a partition nobody owns before its 503: a worker that just joined shows up. */
export const ORPHAN_GRACE_MS = 1_500;
const REFRESH_MS = 250;

/** A worker process's name in consumer_heartbeats (`member`) and in its Kafka client id: host, pid, a nonce. */
export function memberName(): string {
  return `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
}

export interface Heartbeat {
  readonly member: string;
  /** The partitions of the worker's topic it was assigned at its last join; null while not a member. */
  set(partitions: number[] | null): void;
  /** Since when every beat was written (Date.now()); null while the last one failed. */
  writingSince(): number | null;
  /** Removes the row: on a clean exit the partitions are known to be free at once. */
  stop(): Promise<void>;
}

/** Writes this process's assignment every HEARTBEAT_MS; failures (Postgres away) are retried by the next beat. */
export function startHeartbeat(
  sql: Sql,
  log: Logger,
  opts: { group: string; topic: string; member?: string },
): Heartbeat {
  const member = opts.member ?? memberName();
  let partitions: number[] = [];
  let beats = 0;
  let since: number | null = null;
  const beat = async () => {
    const started = Date.now();
    try {
      await sql`
        insert into consumer_heartbeats (member, group_id, topic, partitions)
        values (${member}, ${opts.group}, ${opts.topic}, ${partitions}::int[])
        on conflict (member) do update set partitions = excluded.partitions, beat_at = now()`;
      since ??= started;
      // Rows of processes that died long ago: removed by whichever worker beats.
      if (++beats % 120 === 1)
        await sql`delete from consumer_heartbeats where beat_at < now() - interval '1 hour'`;
    } catch (err) {
      since = null;
      log.debug({ err }, 'heartbeat not written');
    }
    return false;
  };
  // The first beat at once; a new assignment is written at once too (or right after the beat in hand).
  const beating = startPeriodic({ name: 'heartbeat', intervalMs: HEARTBEAT_MS, run: beat }, log);
  return {
    member,
    writingSince: () => since,
    set(p) {
      partitions = p ?? [];
      beating.wake();
    },
    async stop() {
      await beating.stop();
      await sql`delete from consumer_heartbeats where member = ${member}`.catch(() => {});
    },
  };
}

/**
 * A member of a worker's group whose heartbeat row is this old, while this process's own rows are written,
 * is dead (or stalled as long): its siblings remove it from the group. Far above STALE_MS (a busy machine
 * stalls an event loop for a second or two without anything being wrong) and far below the Kafka session
 * timeout, which otherwise decides (10 s by default, then a rebalance).
 */
export const EVICT_AFTER_MS = 5_000;
const EVICT_CHECK_MS = 1_000;

export interface EvictorOptions {
  sql: Sql;
  log: Logger;
  /** This process's heartbeat: its member is never removed, and its rows must be written. */
  heartbeat: Heartbeat;
  /** The consumer group, as named in consumer_heartbeats and in Kafka. */
  group: string;
  admin: KafkaAdmin;
  /** The Kafka client id of the process whose heartbeat rows name it `member`. */
  clientIdOf(member: string): string;
}

/**
 * Removes the members of the group that stopped writing heartbeats, so their partitions go to the live
 * members at once: a worker killed with -9 keeps its partitions until the coordinator expires its session
 * otherwise. Only while this process's own heartbeats have been written for EVICT_AFTER_MS: if Postgres
 * was away, every row is old and none of them means anything. A member removed while merely stalled
 * rejoins when it resumes (one more rebalance); its chunk in hand is redelivered and applied once.
 */
export function startEvictor(o: EvictorOptions): { stop(): Promise<void> } {
  const admin = o.admin;
  let connected = false;
  const check = async () => {
    const since = o.heartbeat.writingSince();
    if (since === null || Date.now() - since < EVICT_AFTER_MS) return;
    const silent = await o.sql<{ member: string; silent_ms: number }[]>`
      select member, (extract(epoch from now() - beat_at) * 1000)::int as silent_ms from consumer_heartbeats
      where group_id = ${o.group} and member <> ${o.heartbeat.member}
        and beat_at < now() - make_interval(secs => ${EVICT_AFTER_MS / 1000})`;
    if (silent.length === 0) return;
    if (!connected) {
      await admin.connect();
      connected = true;
    }
    const members = await admin.describeGroup(o.group);
    for (const row of silent) {
      const member = members.find((m) => m.clientId === o.clientIdOf(row.member));
      if (member) {
        await admin.removeGroupMember({ groupId: o.group, memberId: member.memberId });
        o.log.warn(
          { member: row.member, silentMs: row.silent_ms },
          'removed a group member that stopped writing heartbeats: its partitions go to the others now',
        );
      }
      // Gone from the group (removed now, or earlier): its row only misleads. A process that was merely
      // stalled writes it again with its next beat.
      await o.sql`delete from consumer_heartbeats where member = ${row.member}`;
    }
  };
  const checking = startPeriodic(
    {
      name: 'evictor',
      intervalMs: EVICT_CHECK_MS,
      delayFirst: true,
      run: () =>
        check()
          .catch((err: unknown) => o.log.debug({ err }, 'evictor check failed'))
          .then(() => false),
    },
    o.log,
  );
  return {
    async stop() {
      await checking.stop();
      if (connected) await admin.disconnect().catch(() => {});
    },
  };
}

/**
 * The partition the producer gives `key` on a topic of `count` partitions: murmur2 of the key's bytes, as the
 * Java client and kafkajs's default partitioner (kafka-producer.ts SimpleProducer; test/unit/partitioner.test.ts).
 */
export function partitionOf(_topic: string, key: string, count: number): number {
  return compatibilityPartitioner({ topic: _topic, value: undefined }, Buffer.from(key)) % count;
}

interface Watch {
  topic: string;
  partition: number;
  since: number;
  graceMs: number;
  resolve: () => void;
}

/**
 * The ingress's view of consumer_heartbeats, refreshed every REFRESH_MS. With no successful read for
 * STALE_MS (Postgres away) no partition counts as owned: no worker can record an outcome then either.
 */
export class ConsumerLiveness {
  private owned = new Map<string, Set<number>>();
  private lastOk = 0;
  private refreshing: RunningTask | null = null;
  private readonly watches = new Set<Watch>();
  /** Topics seen fully owned once: a topic losing an owner after that is logged, not one never owned. */
  private readonly covered = new Map<string, boolean>();

  private readonly sql: Sql;
  private readonly log: Logger;
  /** Partition count per topic name (the configured counts the topics are created with). */
  private readonly partitions: Record<string, number>;

  constructor(sql: Sql, log: Logger, partitions: Record<string, number>) {
    this.sql = sql;
    this.log = log;
    this.partitions = partitions;
  }

  start(): void {
    this.refreshing = startPeriodic(
      {
        name: 'consumer heartbeats refresh',
        intervalMs: REFRESH_MS,
        run: async () => {
          await this.refresh().catch((err: unknown) =>
            this.log.debug({ err }, 'consumer heartbeats not read'),
          );
          this.check();
          return false;
        },
      },
      this.log,
    );
  }

  /** Resolves once the refresh in hand (if any) has ended. */
  async stop(): Promise<void> {
    await this.refreshing?.stop();
    this.refreshing = null;
  }

  /** Resolves once `key`'s partition of `topic` has had no live owner while the caller waited graceMs. */
  watch(topic: string, key: string, graceMs = ORPHAN_GRACE_MS): { promise: Promise<void>; cancel(): void } {
    const count = this.partitions[topic];
    let w: Watch | null = null;
    const promise = new Promise<void>((resolve) => {
      if (count === undefined) return;
      w = { topic, partition: partitionOf(topic, key, count), since: Date.now(), graceMs, resolve };
      this.watches.add(w);
    });
    return { promise, cancel: () => void (w && this.watches.delete(w)) };
  }

  /** Whether a live worker owns the partition; null when not known (no recent successful read). */
  isOwned(topic: string, partition: number): boolean | null {
    if (Date.now() - this.lastOk > STALE_MS) return null;
    return this.owned.get(topic)?.has(partition) ?? false;
  }

  private async refresh(): Promise<void> {
    const rows = await this.sql<{ topic: string; partitions: number[] }[]>`
      select topic, partitions from consumer_heartbeats
      where beat_at > now() - make_interval(secs => ${STALE_MS / 1000})`;
    const owned = new Map<string, Set<number>>();
    for (const r of rows) {
      let set = owned.get(r.topic);
      if (!set) owned.set(r.topic, (set = new Set()));
      for (const p of r.partitions) set.add(p);
    }
    this.owned = owned;
    this.lastOk = Date.now();
    this.report();
  }

  /** Ends the watches that waited their grace without a live owner, or without Postgres to tell. */
  private check(): void {
    const now = Date.now();
    for (const w of this.watches) {
      if (now - w.since >= w.graceMs && this.isOwned(w.topic, w.partition) !== true) {
        this.watches.delete(w);
        w.resolve();
      }
    }
  }

  /** One line when a topic loses an owner and one when it is whole again. */
  private report(): void {
    for (const [topic, count] of Object.entries(this.partitions)) {
      const have = this.owned.get(topic);
      const free = Array.from({ length: count }, (_, i) => i).filter((p) => !have?.has(p));
      const was = this.covered.get(topic);
      if (free.length === 0 && was !== true) {
        if (was === false) this.log.info({ topic }, 'every partition has a live consumer again');
        this.covered.set(topic, true);
      } else if (free.length > 0 && was === true) {
        this.log.warn(
          { topic, partitions: free },
          `no live consumer owns these partitions: their commands answer 503 after ${ORPHAN_GRACE_MS} ms`,
        );
        this.covered.set(topic, false);
      }
    }
  }
}
