// What the cluster fault suite asks a Kafka cluster and the consumer groups (npm run chaos -- --cluster,
// bench:clicks --brokers 3): who leads which partitions, whether every replica is back in sync, and whether
// every partition of a worker's topic has a live owner again (consumer_heartbeats, as the web process reads it).
import { hostname } from 'node:os';
import type { KafkaAdmin as Admin } from '../../../shared/pipeline/kafka.ts';
import type { Sql } from '../../../shared/db/sql.ts';
import { STALE_MS } from '../../../shared/pipeline/liveness.ts';

/** How many partitions of `topic` each node leads. */
export async function leaderCounts(admin: Admin, topic: string): Promise<Map<number, number>> {
  const md = await admin.fetchTopicMetadata({ topics: [topic] });
  const counts = new Map<number, number>();
  for (const p of md.topics[0]!.partitions) counts.set(p.leader, (counts.get(p.leader) ?? 0) + 1);
  return counts;
}

/**
 * Whether every partition of these topics has a leader and all its replicas in sync (after a node's
 * restart: it caught up and the next node may go). Null when the metadata could not be read.
 */
export async function replicasInSync(admin: Admin, topics: string[]): Promise<boolean | null> {
  const md = await admin.fetchTopicMetadata({ topics }).catch(() => null);
  if (!md) return null;
  return md.topics.every((t) =>
    t.partitions.every((p) => p.leader >= 0 && p.isr.length === p.replicas.length),
  );
}

/** Partitions of these topics that `node` still leads (0 once every one has moved to another node). */
export async function ledBy(admin: Admin, topics: string[], node: number): Promise<number | null> {
  const md = await admin.fetchTopicMetadata({ topics }).catch(() => null);
  if (!md) return null;
  return md.topics.reduce((n, t) => n + t.partitions.filter((p) => p.leader === node).length, 0);
}

/**
 * The groups (of those named) some partition of whose topic has no live owner now: no heartbeat younger
 * than STALE_MS claims it, not counting the processes `dead` names (pids of this host's processes killed
 * a moment ago, whose last heartbeat still looks fresh). `partitions`: each group's topic's partition count.
 */
export async function groupsWithOrphans(
  sql: Sql,
  partitions: Map<string, number>,
  dead: number[] = [],
): Promise<string[]> {
  const rows = await sql<{ member: string; group_id: string; partitions: number[] }[]>`
    select member, group_id, partitions from consumer_heartbeats
    where beat_at > now() - make_interval(secs => ${STALE_MS / 1000})`;
  const owned = new Map<string, Set<number>>();
  // The member name is <hostname>-<pid>-<random> (startHeartbeat).
  const deadMember = (m: string) => dead.some((pid) => m.startsWith(`${hostname()}-${pid}-`));
  for (const r of rows) {
    if (deadMember(r.member)) continue;
    let set = owned.get(r.group_id);
    if (!set) owned.set(r.group_id, (set = new Set()));
    for (const p of r.partitions) set.add(p);
  }
  return [...partitions].filter(([g, n]) => (owned.get(g)?.size ?? 0) < n).map(([g]) => g);
}
