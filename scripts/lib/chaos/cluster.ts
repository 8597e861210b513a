// The faults of `npm run chaos -- --cluster` (scripts/chaos.ts runs them under its load and accounts for
// every request): a broker killed (the one leading the most click partitions, then the active
// controller), every broker restarted in turn, one process of every kind killed. And the second table:
// how callers fared while one broker of three was down, and how long each worker group's partitions waited
// for the surviving process.
import type { KafkaAdmin as Admin } from '../../../shared/pipeline/kafka.ts';
import type { Sql } from '../../../shared/db/sql.ts';
import { TOPICS } from '../../../shared/contracts/topics.ts';
import { groupsWithOrphans, ledBy, leaderCounts, replicasInSync } from './cluster-state.ts';

export interface Fault {
  name: string;
  what: string;
  /** Injects the fault; resolves with the recovery time (ms epoch) once recovered. */
  run(extra: FaultExtra): Promise<number>;
  /** The processes (instance names) this fault hits: their exits are expected. */
  targets?: string[];
}

/** What a cluster fault records beyond the common table. */
export interface FaultExtra {
  /** When one broker was down (killed or stopped, until it was started again). */
  down: { from: number; to: number }[];
  /** Per consumer group: ms from the kill until its partitions all had a live owner again; null: not within the bound. */
  takeover: Map<string, number | null>;
  /** Which node, and how the cluster moved. */
  detail?: string;
}

export const SHORT_CLUSTER_FAULTS = ['leader-kill', 'kill-replicas'];

/**
 * The cluster's nodes as a fault acts on them: started again by the harness (cluster.restart), or, under
 * the supervisor (--supervised), by `npm start`'s supervisor, which `start` then only waits for.
 */
export interface Brokers {
  count: number;
  /** kill -9 of node `node` (1-based); resolves once it has exited. */
  kill(node: number): Promise<void>;
  /** SIGTERM of node `node`; resolves once it has exited. */
  stop(node: number): Promise<void>;
  /** Resolves once node `node` runs again. */
  start(node: number): Promise<void>;
  activeController(): Promise<number | null>;
}

export interface ClusterContext {
  brokers: Brokers;
  admin: () => Admin;
  sql: () => Sql;
  prefix: string;
  /** How long a killed broker stays down. */
  holdMs: number;
  /** The longest wait for anything (leaders moving, replicas in sync, partitions owned). */
  boundMs: number;
  /** The processes kill-replicas kills: one of every service. */
  victims: string[];
  pidOf(id: string): Promise<number>;
  kill(id: string): Promise<void>;
  /** Starts the process again; resolves once it is ready. */
  restart(id: string): Promise<number>;
  progress(line: string): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** Polls `check` until it is true (a thrown or null answer counts as not yet); the moment, or null past the bound. */
async function until(
  check: () => Promise<boolean | null>,
  boundMs: number,
  everyMs = 100,
): Promise<number | null> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    if (await check().catch(() => null)) return Date.now();
    if (Date.now() > deadline) return null;
    await sleep(everyMs);
  }
}

export function clusterFaults(ctx: ClusterContext): Fault[] {
  const topics = [...Object.values(TOPICS).map((t) => `${ctx.prefix}${t}`), '__consumer_offsets'];
  const inSync = () => replicasInSync(ctx.admin(), topics);

  /** kill -9 of `node`, held down, started again; waits until its replicas are back in sync. */
  async function brokerOutage(node: number, extra: FaultExtra): Promise<number> {
    const from = Date.now();
    await ctx.brokers.kill(node);
    const moved = await until(async () => (await ledBy(ctx.admin(), topics, node)) === 0, ctx.boundMs);
    extra.detail += moved
      ? `; its partitions led elsewhere after ${secs(moved - from)}`
      : '; leaders did not move';
    ctx.progress(
      `  node ${node} killed; ${moved ? `leaders moved after ${secs(moved - from)}` : 'leaders did not move'}`,
    );
    const rest = from + ctx.holdMs - Date.now();
    if (rest > 0) await sleep(rest);
    await ctx.brokers.start(node);
    extra.down.push({ from, to: Date.now() });
    const synced = await until(inSync, ctx.boundMs, 250);
    ctx.progress(
      `  node ${node} started again; ${synced ? 'every replica in sync' : 'replicas NOT in sync within the bound'}`,
    );
    return moved ?? Date.now();
  }

  return [
    {
      name: 'leader-kill',
      what: 'kill -9 of the broker leading the most click partitions, started again after --hold',
      run: async (extra) => {
        const counts = await leaderCounts(ctx.admin(), `${ctx.prefix}${TOPICS.clicks}`);
        const controller = await ctx.brokers.activeController();
        // The most click partitions; of equals, not the controller (the next fault kills that one).
        const [node, led] = [...counts]
          .filter(([id]) => id >= 0)
          .sort((a, b) => b[1] - a[1] || Number(a[0] === controller) - Number(b[0] === controller))[0]!;
        extra.detail = `node ${node}, leader of ${led} of ${[...counts.values()].reduce((a, b) => a + b, 0)} click partitions`;
        return brokerOutage(node, extra);
      },
    },
    {
      name: 'controller-kill',
      what: 'kill -9 of the active controller, started again after --hold',
      run: async (extra) => {
        const node = await ctx.brokers.activeController();
        if (node === null) throw new Error('no active controller recorded');
        const led = (await leaderCounts(ctx.admin(), `${ctx.prefix}${TOPICS.clicks}`)).get(node) ?? 0;
        extra.detail = `node ${node}, leader of ${led} click partitions`;
        const from = Date.now();
        const elected = until(async () => {
          const now = await ctx.brokers.activeController();
          return now !== null && now !== node;
        }, ctx.boundMs);
        const recovered = await brokerOutage(node, extra);
        const at = await elected;
        extra.detail += at ? `; a new controller after ${secs(at - from)}` : '; no new controller';
        return recovered;
      },
    },
    {
      name: 'rolling-restart',
      what: 'SIGTERM of each broker in turn, started again; the next once every replica is in sync',
      run: async (extra) => {
        const took: string[] = [];
        for (let node = 1; node <= ctx.brokers.count; node++) {
          const from = Date.now();
          await ctx.brokers.stop(node);
          await ctx.brokers.start(node);
          extra.down.push({ from, to: Date.now() });
          const synced = await until(inSync, ctx.boundMs, 250);
          took.push(`node ${node} ${secs(Date.now() - from)}`);
          ctx.progress(
            `  node ${node} restarted; ${synced ? 'every replica in sync' : 'replicas NOT in sync within the bound'}`,
          );
        }
        extra.detail = took.join(', ');
        return Date.now();
      },
    },
    {
      name: 'kill-replicas',
      what: 'kill -9 of one process of every worker and one web process',
      targets: ctx.victims,
      run: async (extra) => {
        // The consumer groups as their heartbeats name them, and their topics' partition counts.
        const rows = await ctx.sql()<{ group_id: string; topic: string }[]>`
          select distinct group_id, topic from consumer_heartbeats where group_id like ${`${ctx.prefix}%`}`;
        const md = await ctx.admin().fetchTopicMetadata({ topics: [...new Set(rows.map((r) => r.topic))] });
        const count = new Map(md.topics.map((t) => [t.name, t.partitions.length]));
        const groups = new Map(rows.map((r) => [r.group_id, count.get(r.topic) ?? 0]));
        const pids = await Promise.all(ctx.victims.map((id) => ctx.pidOf(id)));
        extra.detail = `${ctx.victims.length} processes, one of each kind`;
        const from = Date.now();
        await Promise.all(ctx.victims.map((id) => ctx.kill(id)));
        // Not restarted yet: a new member joining now would hold the whole group's rebalance until the
        // dead member's session expires (its partitions and the survivor's); an orchestrator restarts it
        // later anyway. What counts here is how long the survivor takes to be given the dead one's share.
        const pending = new Set(groups.keys());
        while (pending.size > 0 && Date.now() < from + ctx.boundMs) {
          const orphans = new Set(await groupsWithOrphans(ctx.sql(), groups, pids).catch(() => [...pending]));
          for (const g of [...pending]) {
            if (orphans.has(g)) continue;
            extra.takeover.set(g, Date.now() - from);
            pending.delete(g);
          }
          await sleep(100);
        }
        for (const g of pending) extra.takeover.set(g, null);
        const recovered = Date.now();
        ctx.progress(
          `  every partition owned again after ${secs(recovered - from)}; restarting ${ctx.victims.join(', ')}`,
        );
        await Promise.all(ctx.victims.map((id) => ctx.restart(id)));
        return recovered;
      },
    },
  ];
}

export const CLUSTER_HEADER = [
  'fault',
  'what happened',
  'one broker down',
  'requests meanwhile',
  'answered 200',
  'slowest answer',
  'partitions back with a live owner',
  'targets',
];

interface AttemptLike {
  sent: number;
  answered: number;
  status: number | string;
}

/** One row of the cluster table: the requests sent while a broker was down, and the takeovers. */
export function clusterRow(
  r: { fault: { name: string }; extra: FaultExtra },
  attempts: AttemptLike[],
  sessionTimeoutMs: number,
): string[] {
  const { down, takeover, detail } = r.extra;
  const during = attempts.filter((a) => down.some((w) => a.sent >= w.from && a.sent <= w.to));
  const ok = during.filter((a) => a.status === 200).length;
  const share = during.length ? (100 * ok) / during.length : 100;
  const slowest = during.length ? Math.max(...during.map((a) => a.answered - a.sent)) : 0;
  const downMs = down.reduce((n, w) => n + w.to - w.from, 0);
  const waits = [...takeover].map(([g, ms]) => [g.replace(/^.*\./, '').replace(/-worker$/, ''), ms] as const);
  const missed = [
    down.length && share < 99 ? '200 < 99 %' : '',
    down.length && slowest > 2500 ? 'answer > 2.5 s' : '',
    waits.some(([, ms]) => ms === null || ms > sessionTimeoutMs)
      ? `takeover > ${secs(sessionTimeoutMs)}`
      : '',
  ].filter(Boolean);
  return [
    r.fault.name,
    detail ?? '',
    down.length ? secs(downMs) : '-',
    down.length ? String(during.length) : '-',
    down.length ? `${ok} (${share.toFixed(2)} %)` : '-',
    down.length ? secs(slowest) : '-',
    waits.length ? waits.map(([g, ms]) => `${g} ${ms === null ? 'never' : secs(ms)}`).join(', ') : '-',
    missed.length ? `MISSED: ${missed.join(', ')}` : 'met',
  ];
}
