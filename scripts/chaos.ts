// npm run chaos: the project's own fault suite. A throwaway Postgres + Kafka and every service process,
// a steady mixed load (clicks with event_ids, leads, sales, refunds; every request retried as a careful
// client would: clicks with the same event_id, commands with the same Idempotency-Key), and faults one at
// a time. Per fault it prints how callers saw the fault and the recovery, and afterwards whether anything
// answered 200 was lost or stored twice, and whether any process exited that was not the one hit.
// --cluster: the same on three Kafka nodes with two processes of everything, and the faults a cluster is
// for (scripts/lib/chaos-cluster.ts).
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { rm, writeFile } from 'node:fs/promises';
import { cli } from './lib/cli.ts';
import {
  STACK_DIR,
  clusterTopicEnv,
  freePort,
  onStopSignal,
  startKafka,
  startKafkaCluster,
  startPostgres,
  waitForPort,
} from './lib/stack.ts';
import type { KafkaCluster, KafkaServer, PostgresServer } from './lib/stack.ts';
import { ENTRIES, spawnService } from './lib/services.ts';
import { clusterFaults, clusterRow, CLUSTER_HEADER, SHORT_CLUSTER_FAULTS } from './lib/chaos-cluster.ts';
import type { Fault, FaultExtra } from './lib/chaos-cluster.ts';
import { loadConfig } from '../shared/config.ts';
import { createKafka } from '../shared/pipeline/kafka.ts';
import { topicName } from '../shared/contracts/topics.ts';
import type { ServiceName, ServiceProcess } from './lib/services.ts';
import { migrate } from '../shared/db/migrate.ts';
import { createLogger } from '../shared/logger.ts';
import { createSql } from '../shared/db/sql.ts';
import type { Sql } from '../shared/db/sql.ts';
import { seedBenchProgram } from './lib/bench-seed.ts';
import { percentile } from '../shared/stats.ts';

const USAGE = `Usage: npm run chaos [-- options]

Starts its own throwaway PostgreSQL and Kafka (under .stack/chaos-<pid>, removed at the end) and every
service process, runs a mixed load (clicks with event_ids, leads, sales, refunds; --concurrency loops) and
applies faults one at a time:
  kill -9 of each process type (restarted at once, as an orchestrator would), Kafka broker kill -9 and
  restart, Postgres stop and start, every Postgres backend terminated, SIGTERM of each process type.
Each fault is held for a moment, then recovered; the next one starts once every kind of request was
answered 200 again after the recovery (or after --settle-max seconds). Prints one line per fault:
  first fail   time from the fault to the first failed answer
  failures     how they looked (kind, status or error, count) and their durations p50/max
  first 200    time from the recovery (process ready, broker/Postgres listening) to the first 200 of the
               kind that came back last
  lost, dup    requests answered 200 whose effect is not stored / effects stored more than once
  exits        processes that exited without being the one hit
and whether the targets hold (failures answered within 2.5 s, first 200 within 2 s of recovery, nothing
lost or duplicated, no other exit). About 5 minutes; --short runs five faults in about 1.5 minutes.

With --cluster it starts three Kafka nodes (each broker and controller; every topic replicated three
times, min.insync.replicas 2) and two processes of web and of every worker (web's share the port), and
applies the faults a cluster is for:
  leader-kill       kill -9 of the broker that leads the most click partitions, restarted after --hold s
  controller-kill   kill -9 of the active controller (the quorum's leader), restarted after --hold s
  rolling-restart   SIGTERM of each broker in turn, restarted; the next once every replica is in sync
  kill-replicas     kill -9 of one process of every worker and one web process, restarted once every
                    partition has a live owner again
and prints a second table: while a broker was down, the requests answered 200 (target: 99 %) and the
slowest answer (target: 2.5 s); after kill-replicas, how long each worker's partitions waited for the
surviving process (target: the session timeout, KAFKA_SESSION_TIMEOUT_MS); and whether the partners'
balances equal their ledger entries. About 7 minutes on a quiet machine (--short: leader-kill and
kill-replicas, about 3).

Exit status: 1 when anything answered 200 was lost or duplicated, a balance differs from its ledger, a
process exited that no fault hit, or a SIGTERM did not end in exit 0; the time targets are printed
(MISSED) but fail the run only with --strict, since they depend on the machine (CI runs --short without
--strict). 2: the harness failed.

Options:
  --short              kill -9 click worker and web, broker kill -9, Postgres stop/start, SIGTERM of the
                       attribution worker (with --cluster: leader-kill and kill-replicas)
  --faults <a,b,...>   only these faults (names as printed, e.g. kill-web,broker-kill,pg-stop)
  --cluster            three Kafka nodes, two processes of everything, the cluster faults (above)
  --replicas <n>       processes of web and of each worker (default 1; 2 with --cluster)
  --hold <s>           with --cluster: how long a killed broker stays down (default 10)
  --concurrency <n>    load loops (default 8; 4 with --cluster: eight saturate two cores running three
                       Kafka nodes and 20 processes, docs/scaling.md)
  --settle-max <s>     longest wait for recovery after a fault, seconds (default 45)
  --strict             a missed time target fails the run too
  --trace <file>       write every attempt, progress line and service log line (JSON lines, ms since
                       start) to <file>, to see when failures happened relative to a fault
  -h, --help`;

const { values, int } = cli(USAGE, {
  short: { type: 'boolean' },
  faults: { type: 'string' },
  cluster: { type: 'boolean' },
  replicas: { type: 'string' },
  hold: { type: 'string' },
  concurrency: { type: 'string' },
  'settle-max': { type: 'string' },
  strict: { type: 'boolean' },
  trace: { type: 'string' },
});
const tracePath = typeof values.trace === 'string' ? values.trace : null;
const traced: string[] = [];
/** One line of --trace (nothing without it). */
const trace = (what: Record<string, unknown>) =>
  tracePath && traced.push(JSON.stringify({ t: Date.now() - T0, ...what }));
const clusterMode = values.cluster === true;
const replicas = int('replicas', clusterMode ? 2 : 1, 4);
const holdMs = int('hold', 10, 600) * 1000;
const concurrency = int('concurrency', clusterMode ? 4 : 8, 64);
const settleMaxMs = int('settle-max', 45, 600) * 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = createLogger('chaos', process.env.LOG_LEVEL ?? 'warn');
const say = (line: string) => process.stdout.write(`${line}\n`);
const T0 = Date.now();
const stamp = () => `[${((Date.now() - T0) / 1000).toFixed(1).padStart(6)} s]`;
const progress = (line: string) => {
  trace({ ev: 'progress', line });
  process.stderr.write(`${stamp()} ${line}\n`);
};

// ------------------------------------------------------------------------------------------------
// Faults

type Kind = 'click' | 'lead' | 'sale' | 'refund';
const KINDS: Kind[] = ['click', 'lead', 'sale', 'refund'];
const SERVICES = Object.keys(ENTRIES) as ServiceName[];

/** The processes of each service: `web`, … with one replica; `web#1`, `web#2`, … with several. */
const instanceId = (name: ServiceName, replica: number) => (replicas > 1 ? `${name}#${replica}` : name);
const INSTANCES = SERVICES.flatMap((name) =>
  Array.from({ length: replicas }, (_, i) => ({ id: instanceId(name, i + 1), name })),
);
const serviceOf = (id: string) => INSTANCES.find((i) => i.id === id)!.name;
/** The first process of a service: the one the single-process faults hit. */
const first = (name: ServiceName) => instanceId(name, 1);

function allFaults(): Fault[] {
  if (clusterMode) return clusterFaultsHere();
  const faults: Fault[] = [];
  for (const s of SERVICES) {
    faults.push({
      name: `kill-${short(s)}`,
      what: `kill -9 ${first(s)}`,
      targets: [first(s)],
      run: async () => {
        await procs.get(first(s))!.kill();
        await sleep(300);
        return restart(first(s));
      },
    });
  }
  faults.push({
    name: 'broker-kill',
    what: 'Kafka broker kill -9, restarted after 2 s',
    run: async () => {
      kafka.kill();
      await new Promise((r) => (kafka.process.exitCode === null ? kafka.process.once('exit', r) : r(null)));
      await sleep(2000);
      kafka = await startKafka(kafkaOpts);
      return Date.now();
    },
  });
  faults.push({
    name: 'pg-stop',
    what: 'Postgres stop (fast), started again after 2 s',
    run: async () => {
      await postgres.stop();
      await sleep(2000);
      postgres = await startPostgres(pgOpts);
      return Date.now();
    },
  });
  faults.push({
    name: 'pg-terminate',
    what: 'every Postgres backend terminated',
    run: async () => {
      const admin = createSql(databaseUrl, 1, 'svc-chaos-admin');
      try {
        await admin`select count(pg_terminate_backend(pid)) from pg_stat_activity
                    where datname = current_database() and pid <> pg_backend_pid()`;
      } finally {
        await admin.end({ timeout: 2 }).catch(() => {});
      }
      return Date.now();
    },
  });
  for (const s of SERVICES) {
    faults.push({
      name: `term-${short(s)}`,
      what: `SIGTERM ${first(s)} (graceful), restarted after it exits`,
      targets: [first(s)],
      run: async () => {
        const p = procs.get(first(s))!;
        await p.stop();
        const code = await p.exited;
        if (code !== 0) termCodes.push(`${first(s)} exited ${code}`);
        return restart(first(s));
      },
    });
  }
  return faults;
}

function clusterFaultsHere(): Fault[] {
  return clusterFaults({
    cluster: kafkaCluster,
    admin: () => admin,
    sql: () => chaosSql,
    prefix: PREFIX,
    holdMs,
    boundMs: settleMaxMs,
    victims: SERVICES.map(first),
    pidOf: (id) => procs.get(id)!.child.pid!,
    kill: (id) => procs.get(id)!.kill(),
    restart,
    progress,
  });
}

function short(s: ServiceName): string {
  return s.replace(/-worker$/, '');
}

// ------------------------------------------------------------------------------------------------
// The stack and the services

const PREFIX = 'chaos.';
const dir = join(STACK_DIR, `chaos-${process.pid}`);
const pgOpts = { dir: join(dir, 'postgres'), port: await freePort(), database: 'svc', fast: true, log };
const kafkaOpts = { dir: join(dir, 'kafka'), port: await freePort(), controllerPort: await freePort(), log };
/** The running process of each instance (`web`, `click-worker`, or `web#1`, … with --replicas). */
const procs = new Map<string, ServiceProcess>();
const opsPorts = new Map<string, number>();
/** Exits nobody asked for: [time, instance, code]. */
const unexpected: { at: number; name: string; code: number | null }[] = [];
const termCodes: string[] = [];
const expected = new Set<ServiceProcess>();
let stopping = false;
let postgres: PostgresServer;
/** One broker, or (--cluster) three nodes. */
let kafka: KafkaServer;
let kafkaCluster: KafkaCluster;
/** The harness's own view of the cluster (leaders, replicas in sync) and of Postgres. */
let admin: ReturnType<ReturnType<typeof createKafka>['admin']>;
let kafkaBrokers = '';
let chaosSql: Sql;
let databaseUrl = '';
let sessionTimeoutMs = 0;
let baseUrl = '';
let env: Record<string, string> = {};
const tail: string[] = [];

async function cleanup(): Promise<void> {
  stopping = true;
  await Promise.allSettled([...procs.values()].map((p) => p.stop()));
  await admin?.disconnect().catch(() => {});
  await Promise.allSettled([kafka?.stop(), kafkaCluster?.stop(), postgres?.stop()]);
  await rm(dir, { recursive: true, force: true });
}
onStopSignal(async () => {
  await cleanup();
  process.exit(130);
});

function spawn(id: string): ServiceProcess {
  const p = spawnService(serviceOf(id), {
    env: { ...env, OPS_PORT: String(opsPorts.get(id)) },
    onLine: (line) => {
      trace({ ev: 'log', id, line });
      tail.push(`[${id}] ${line}`);
      if (tail.length > 400) tail.splice(0, 100);
    },
  });
  procs.set(id, p);
  void p.exited.then((code) => {
    if (!stopping && !expected.has(p)) {
      unexpected.push({ at: Date.now(), name: id, code });
      progress(`UNEXPECTED EXIT: ${id} exited with ${code}; restarting it`);
      void restart(id).catch(() => {});
    }
  });
  return p;
}

/** Until the process's /readyz answers 200 (bounded); returns that moment. */
async function ready(name: string, timeoutMs = 300_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const r = await fetch(`http://127.0.0.1:${opsPorts.get(name)}/readyz`, {
        signal: AbortSignal.timeout(2000),
      });
      if (r.status === 200) return Date.now();
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${name} not ready after ${timeoutMs} ms`);
    await sleep(100);
  }
}

async function restart(id: string): Promise<number> {
  const old = procs.get(id);
  if (old) expected.add(old);
  spawn(id);
  return ready(id);
}

/** Marks the current process of `id` as one whose exit is expected (the fault's target). */
function expectExit(id: string): void {
  const p = procs.get(id);
  if (p) expected.add(p);
}

// ------------------------------------------------------------------------------------------------
// The load

interface Attempt {
  kind: Kind;
  sent: number;
  answered: number;
  /** HTTP status, or 'refused', 'reset', 'timeout'. */
  status: number | string;
}

interface Logical {
  kind: Kind;
  phase: number;
  ok: boolean;
  /** What to look up afterwards: click_id, transaction_id, click_id of the lead, transaction_id refunded. */
  ref: string;
  answer?: Record<string, unknown>;
}

const attempts: Attempt[] = [];
const logical: Logical[] = [];
let phase = 0;
let loadStopped = false;

interface Seed {
  token: string;
  programId: number;
  leadClicks: string[];
  saleClicks: string[];
  links: string[];
}
let seed: Seed;
const okSales: string[] = [];
/** Clicks answered 200, for leads once the seeded lead clicks are used up. */
const okClicks: string[] = [];
let nextLead = 0;
let seq = 0;

async function post(kind: Kind, path: string, body: unknown, headers: Record<string, string>) {
  const sent = Date.now();
  let status: number | string;
  let json: Record<string, unknown> = {};
  try {
    const res = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    status = res.status;
    json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  } catch (err) {
    const e = err as { name?: string; cause?: { code?: string } };
    status =
      e.name === 'TimeoutError'
        ? 'timeout'
        : e.cause?.code === 'ECONNREFUSED'
          ? 'refused'
          : (e.cause?.code ?? 'network error');
  }
  attempts.push({ kind, sent, answered: Date.now(), status });
  if (status !== 200 || Date.now() - sent > 1000)
    trace({ ev: status === 200 ? 'slow' : 'failed', kind, sent: sent - T0, status, error: json.error });
  return { status, json };
}

/** One logical request, retried (same event_id / Idempotency-Key) on 5xx or a network error, 4 tries. */
async function request(
  kind: Kind,
  path: string,
  body: unknown,
  headers: Record<string, string>,
  ref: string,
) {
  const l: Logical = { kind, phase, ok: false, ref };
  logical.push(l);
  for (let i = 0; i < 4 && !loadStopped; i++) {
    const r = await post(kind, path, body, headers);
    if (r.status === 200) {
      l.ok = true;
      l.answer = r.json;
      return l;
    }
    if (typeof r.status === 'number' && r.status < 500) {
      l.answer = r.json;
      return l; // a 4xx is an answer; retrying it would not change it
    }
    await sleep(Math.min(2000, 250 * 2 ** i));
  }
  return l;
}

async function loop(): Promise<void> {
  const auth = { authorization: `Bearer ${seed.token}` };
  while (!loadStopped) {
    const n = ++seq;
    const roll = n % 10;
    if (roll < 6) {
      const eventId = randomUUID();
      const link = seed.links[n % seed.links.length]!;
      const l = await request(
        'click',
        '/api/v1/track/click',
        { affiliate_url: `https://chaos.example/?aff=${link}`, event_id: eventId },
        {},
        '',
      );
      if (l.ok) {
        l.ref = String(l.answer?.click_id);
        if (okClicks.length < 5000) okClicks.push(l.ref);
      }
    } else if (roll === 6 && (nextLead < seed.leadClicks.length || okClicks.length > 0)) {
      // The seeded clicks first, then clicks of this run (a quiet machine uses up the seed in minutes).
      const clickId = nextLead < seed.leadClicks.length ? seed.leadClicks[nextLead++]! : okClicks.shift()!;
      await request(
        'lead',
        '/api/v1/track/lead',
        { click_id: clickId, customer_key: `chaos-${clickId}` },
        { 'idempotency-key': `lead-${clickId}` },
        clickId,
      );
    } else if (roll === 9 && okSales.length > 0) {
      const txn = okSales.splice(Math.floor(Math.random() * okSales.length), 1)[0]!;
      await request(
        'refund',
        '/api/v1/track/refund',
        { transaction_id: txn },
        { ...auth, 'idempotency-key': `refund-${txn}` },
        txn,
      );
    } else {
      const txn = `chaos-${n}`;
      const l = await request(
        'sale',
        '/api/v1/track/sale',
        {
          transaction_id: txn,
          amount_cents: 1000 + (n % 50),
          click_id: seed.saleClicks[n % seed.saleClicks.length],
        },
        { ...auth, 'idempotency-key': `sale-${txn}` },
        txn,
      );
      if (l.ok) okSales.push(txn);
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Measuring

interface Result {
  fault: Fault;
  extra: FaultExtra;
  at: number;
  recovered: number;
  firstFail: number | null;
  failures: Attempt[];
  firstOk: { kind: Kind; ms: number } | null;
  settled: boolean;
  exits: string[];
  lost: number;
  dup: number;
  phase: number;
}

/** Waits until every kind had a 200 answer to a request sent after `since` (or the bound passes). */
async function settle(since: number): Promise<boolean> {
  const deadline = Date.now() + settleMaxMs;
  for (;;) {
    const back = KINDS.filter((k) =>
      attempts.some((a) => a.kind === k && a.sent >= since && a.status === 200),
    );
    if (back.length === KINDS.length) return true;
    if (Date.now() > deadline) return false;
    await sleep(200);
  }
}

function measure(
  fault: Fault,
  extra: FaultExtra,
  at: number,
  recovered: number,
  until: number,
  ph: number,
  settled: boolean,
  since: number,
): Result {
  // Requests sent before the previous phase ended belong to it, even when they are answered late.
  const window = attempts.filter((a) => a.answered >= at && a.sent >= since && a.sent <= until);
  const failures = window.filter(
    (a) => a.status !== 200 && !(typeof a.status === 'number' && a.status < 500),
  );
  const firstFail = failures.length ? Math.min(...failures.map((a) => a.answered)) - at : null;
  let firstOk: Result['firstOk'] = null;
  // The kinds the fault hit (any kind, when none failed): a kind that never failed says nothing here.
  const hit = KINDS.filter((k) => failures.some((f) => f.kind === k));
  for (const k of hit.length ? hit : KINDS) {
    const oks = attempts.filter((a) => a.kind === k && a.status === 200 && a.answered >= recovered);
    if (oks.length === 0) continue;
    const ms = Math.min(...oks.map((a) => a.answered)) - recovered;
    if (!firstOk || ms > firstOk.ms) firstOk = { kind: k, ms };
  }
  const exits = unexpected.filter((u) => u.at >= at && u.at <= until).map((u) => `${u.name} (${u.code})`);
  return {
    fault,
    extra,
    at,
    recovered,
    firstFail,
    failures,
    firstOk,
    settled,
    exits,
    lost: 0,
    dup: 0,
    phase: ph,
  };
}

/**
 * Where lost clicks are in Kafka, if anywhere: reads the clicks topic from its start to its end offsets in a
 * group of its own and names each lost click's partition and offset, with the click worker's committed
 * offset of that partition. Tells a click never written (or dropped by the brokers) from one skipped by
 * the consumer.
 */
async function whereInKafka(clickIds: string[]): Promise<string[]> {
  if (clickIds.length === 0) return [];
  const topic = topicName(PREFIX, 'clicks');
  const kafkaClient = createKafka(
    { kafkaBrokers: kafkaBrokers.split(','), kafkaClientId: 'svc-chaos-scan' },
    log,
  );
  const ends = await admin.fetchTopicOffsets(topic);
  const committed = await admin.fetchOffsets({ groupId: `${PREFIX}click-worker`, topics: [topic] });
  const committedOf = new Map(committed[0]!.partitions.map((p) => [p.partition, p.offset]));
  const remaining = new Map(ends.map((e) => [e.partition, Number(e.high)]));
  for (const [p, high] of remaining) if (high === 0) remaining.delete(p);
  const found = new Map<string, string>();
  const consumer = kafkaClient.consumer({ groupId: `svc-chaos-scan-${randomUUID()}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let finish = () => {};
  const done = new Promise<void>((r) => (finish = r));
  await consumer.run({
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) {
        const text = m.value?.toString('utf8') ?? '';
        for (const id of clickIds)
          if (text.includes(id))
            found.set(
              id,
              `partition ${batch.partition} offset ${m.offset} (written ${new Date(Number(m.timestamp)).toISOString()}; the click worker's committed offset ${committedOf.get(batch.partition) ?? '?'})`,
            );
      }
      const high = remaining.get(batch.partition);
      if (high !== undefined && Number(batch.lastOffset()) + 1 >= high) remaining.delete(batch.partition);
      if (remaining.size === 0) finish();
    },
  });
  if (remaining.size === 0) finish();
  await Promise.race([done, sleep(60_000)]);
  await consumer.disconnect().catch(() => {});
  return clickIds.map((id) => `${id}: ${found.get(id) ?? 'not in Kafka'}`);
}

/** Lost and duplicated, per phase, once the pipeline drained. */
async function account(
  sql: Sql,
  results: Result[],
): Promise<{ lost: Map<number, string[]>; dup: Map<number, string[]>; ledger: string[] }> {
  const lost = new Map<number, string[]>();
  const dup = new Map<number, string[]>();
  const add = (m: Map<number, string[]>, ph: number, what: string) => m.set(ph, [...(m.get(ph) ?? []), what]);
  const ok = logical.filter((l) => l.ok);
  const clicks = ok.filter((l) => l.kind === 'click').map((l) => l.ref);
  const leads = ok.filter((l) => l.kind === 'lead').map((l) => l.ref);
  // Wait for the pipeline to drain: every answered click stored (bounded).
  const deadline = Date.now() + 120_000;
  for (;;) {
    const [n] = await sql<{ n: number }[]>`
      select count(distinct click_id)::int as n from click_events where click_id = any(${clicks})`;
    if (n!.n >= clicks.length || Date.now() > deadline) break;
    await sleep(500);
  }
  await sleep(2000);
  const storedClicks = new Map(
    (
      await sql<{ click_id: string; n: number }[]>`
        select click_id, count(*)::int as n from click_events where program_id = ${seed.programId} group by click_id`
    ).map((r) => [r.click_id, r.n]),
  );
  const storedSales = new Map(
    (
      await sql<{ transaction_id: string; n: number }[]>`
        select transaction_id, count(*)::int as n from sales where program_id = ${seed.programId} group by transaction_id`
    ).map((r) => [r.transaction_id, r.n]),
  );
  const leadRows = new Set(
    (
      await sql<{ click_id: string }[]>`
        select click_id from customers where click_id = any(${leads}) and customer_status <> 'click'`
    ).map((r) => r.click_id),
  );
  const refunded = new Map(
    (
      await sql<{ transaction_id: string; status: string }[]>`
        select s.transaction_id, c.status from sales s join commissions c on c.sale_id = s.id
        where s.program_id = ${seed.programId}`
    ).map((r) => [r.transaction_id, r.status]),
  );
  const ledgerDup = await sql<{ commission_id: string; kind: string; n: number }[]>`
    select e.commission_id, e.kind, count(*)::int as n from ledger_entries e
    join commissions c on c.id = e.commission_id join sales s on s.id = c.sale_id
    where s.program_id = ${seed.programId} group by 1, 2 having count(*) > 1`;
  const phaseOfTxn = new Map(logical.filter((l) => l.kind === 'sale').map((l) => [l.ref, l.phase]));
  for (const l of ok) {
    if (l.kind === 'click' && !storedClicks.has(l.ref)) add(lost, l.phase, `click ${l.ref}`);
    if (l.kind === 'sale' && !storedSales.has(l.ref)) add(lost, l.phase, `sale ${l.ref}`);
    if (l.kind === 'lead' && !leadRows.has(l.ref)) add(lost, l.phase, `lead ${l.ref}`);
    if (l.kind === 'refund') {
      const status = l.answer?.status;
      if ((status === 'reversed' || status === 'refunded') && refunded.get(l.ref) !== status)
        add(lost, l.phase, `refund ${l.ref}`);
    }
  }
  const clickPhase = new Map(ok.filter((l) => l.kind === 'click').map((l) => [l.ref, l.phase]));
  for (const [id, n] of storedClicks) if (n > 1) add(dup, clickPhase.get(id) ?? 0, `click ${id} ×${n}`);
  for (const [txn, n] of storedSales) if (n > 1) add(dup, phaseOfTxn.get(txn) ?? 0, `sale ${txn} ×${n}`);
  for (const d of ledgerDup) add(dup, 0, `ledger ${d.kind} of commission ${d.commission_id} ×${d.n}`);
  // Counters that count a click twice show as a link counter above its stored rows.
  const counters = await sql<{ short_link: string; clicks: number; stored: number }[]>`
    select l.short_link, l.clicks::int, (select count(*)::int from click_events e where e.link_id = l.id and not e.is_test) as stored
    from referral_links l where l.program_id = ${seed.programId}`;
  for (const c of counters)
    if (c.clicks !== c.stored)
      add(dup, 0, `link ${c.short_link} counts ${c.clicks} clicks, ${c.stored} stored`);
  for (const r of results) {
    r.lost = lost.get(r.phase)?.length ?? 0;
    r.dup = dup.get(r.phase)?.length ?? 0;
  }
  return { lost, dup, ledger: await ledgerProblems(sql) };
}

/**
 * The ledger afterwards: every commission of the program has its commission_created entry (once the
 * ledger worker drained, bounded), and each partner's and partner-program's balance equals the sum of its
 * entries. Returns what differs.
 */
async function ledgerProblems(sql: Sql): Promise<string[]> {
  const deadline = Date.now() + 120_000;
  let missing: { id: string }[] = [];
  for (;;) {
    missing = await sql<{ id: string }[]>`
      select c.id from commissions c where c.program_id = ${seed.programId}
      and not exists (select 1 from ledger_entries e where e.commission_id = c.id and e.kind = 'commission_created')`;
    if (missing.length === 0 || Date.now() > deadline) break;
    await sleep(500);
  }
  const partners = await sql<{ id: string; balance: string; sum: string }[]>`
    select p.id, p.balance_cents::text as balance,
           coalesce((select sum(e.partner_cents) from ledger_entries e where e.partner_id = p.id), 0)::text as sum
    from partners p where p.id in (select partner_id from partner_programs where program_id = ${seed.programId})`;
  const programs = await sql<{ id: string; balance: string; sum: string }[]>`
    select pp.id, pp.balance_cents::text as balance,
           coalesce((select sum(e.program_cents) from ledger_entries e where e.partner_program_id = pp.id), 0)::text as sum
    from partner_programs pp where pp.program_id = ${seed.programId}`;
  return [
    ...(missing.length ? [`${missing.length} commission(s) without their ledger entry`] : []),
    ...partners
      .filter((p) => p.balance !== p.sum)
      .map((p) => `partner ${p.id}: balance ${p.balance}, ledger ${p.sum}`),
    ...programs
      .filter((p) => p.balance !== p.sum)
      .map((p) => `partner-program ${p.id}: balance ${p.balance}, ledger ${p.sum}`),
  ];
}

const fmt = (ms: number | null) => (ms === null ? '-' : `${(ms / 1000).toFixed(2)} s`);

function row(r: Result): string[] {
  const byStatus = new Map<string, number>();
  for (const f of r.failures) {
    const k = `${f.kind} ${f.status}`;
    byStatus.set(k, (byStatus.get(k) ?? 0) + 1);
  }
  const durs = r.failures.map((f) => f.answered - f.sent);
  const failMax = durs.length ? Math.max(...durs) : 0;
  const firstOkMs = r.firstOk?.ms ?? null;
  const targets = [
    failMax <= 2500 ? '' : 'failure > 2.5 s',
    r.settled && firstOkMs !== null && firstOkMs <= 2000 ? '' : 'first 200 > 2 s',
    ...accountingMisses(r),
  ].filter(Boolean);
  return [
    r.fault.name,
    fmt(r.firstFail),
    byStatus.size ? [...byStatus].map(([s, n]) => `${s}×${n}`).join(' ') : 'none',
    durs.length ? `${fmt(percentile(durs, 50))} / ${fmt(failMax)}` : '-',
    r.settled ? `${fmt(firstOkMs)} (${r.firstOk?.kind})` : `not within ${settleMaxMs / 1000} s`,
    String(r.lost),
    String(r.dup),
    r.exits.length ? r.exits.join(', ') : '0',
    targets.length ? `MISSED: ${targets.join(', ')}` : 'met',
  ];
}

function accountingMisses(r: Result): string[] {
  return [
    r.lost === 0 ? '' : 'lost',
    r.dup === 0 ? '' : 'duplicated',
    r.exits.length === 0 ? '' : 'other exit',
  ].filter(Boolean);
}

function table(rows: string[][]): string {
  const w = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(w[i]!)).join(' | ')} |`;
  return [line(rows[0]!), `|${w.map((n) => '-'.repeat(n + 2)).join('|')}|`, ...rows.slice(1).map(line)].join(
    '\n',
  );
}

// ------------------------------------------------------------------------------------------------
// The run

let code = 0;
try {
  progress(`starting PostgreSQL and Kafka${clusterMode ? ' (three nodes)' : ''}`);
  const clusterPorts = [];
  for (let i = 0; clusterMode && i < 3; i++)
    clusterPorts.push({ port: await freePort(), controllerPort: await freePort() });
  const [pg, brokers] = await Promise.all([
    startPostgres(pgOpts),
    clusterMode
      ? startKafkaCluster({ dir: join(dir, 'kafka-3'), ports: clusterPorts, heapMb: 320, log }).then((c) => {
          kafkaCluster = c;
          return c.brokers;
        })
      : startKafka(kafkaOpts).then((k) => {
          kafka = k;
          return k.brokers;
        }),
  ]);
  postgres = pg;
  databaseUrl = postgres.url;
  await migrate(databaseUrl, log);
  const sql = createSql(databaseUrl, 2, 'svc-chaos');
  chaosSql = sql;
  kafkaBrokers = brokers;
  admin = createKafka({ kafkaBrokers: brokers.split(','), kafkaClientId: 'svc-chaos' }, log).admin();
  await admin.connect();
  const bench = await seedBenchProgram(sql, { customers: 2000, customerKeys: false });
  const [pp] = await sql<{ id: string; partner_id: string }[]>`
    select id, partner_id from partner_programs where program_id = ${bench.programId}`;
  const links = ['bench'];
  for (let i = 0; i < 3; i++) {
    const short = `chaos-${i}`;
    await sql`insert into referral_links (short_link, program_id, partner_id, partner_program_id)
              values (${short}, ${bench.programId}, ${pp!.partner_id}, ${pp!.id})`;
    links.push(short);
  }
  seed = {
    token: bench.token,
    programId: bench.programId,
    leadClicks: bench.clickIds.slice(0, 1000),
    saleClicks: bench.clickIds.slice(1000),
    links,
  };
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  env = {
    DATABASE_URL: databaseUrl,
    KAFKA_BROKERS: brokers,
    ...(clusterMode ? clusterTopicEnv(3) : {}),
    KAFKA_PREFIX: PREFIX,
    PORT: String(port),
    ...(replicas > 1 ? { REUSE_PORT: 'true' } : {}),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '0',
  };
  sessionTimeoutMs = loadConfig({ ...process.env, ...env }).kafkaSessionTimeoutMs;
  for (const i of INSTANCES) opsPorts.set(i.id, await freePort());
  progress(`starting ${INSTANCES.map((i) => i.id).join(', ')}`);
  // One web process first: it creates the topics the others wait for.
  spawn(first('web'));
  await ready(first('web'));
  for (const i of INSTANCES.filter((x) => x.id !== first('web'))) spawn(i.id);
  await Promise.all(INSTANCES.map((i) => ready(i.id)));
  await waitForPort(port, 10_000);

  let faults = allFaults();
  if (values.short) {
    const pick = clusterMode
      ? SHORT_CLUSTER_FAULTS
      : ['kill-click', 'kill-web', 'broker-kill', 'pg-stop', 'term-attribution'];
    faults = faults.filter((f) => pick.includes(f.name));
  }
  if (typeof values.faults === 'string') {
    const pick = values.faults.split(',').map((s) => s.trim());
    const unknown = pick.filter((p) => !faults.some((f) => f.name === p));
    if (unknown.length)
      throw new Error(
        `unknown faults: ${unknown.join(', ')} (known: ${allFaults()
          .map((f) => f.name)
          .join(', ')})`,
      );
    faults = faults.filter((f) => pick.includes(f.name));
  }

  progress(`load: ${concurrency} loops; warming up`);
  const loops = Promise.all(Array.from({ length: concurrency }, loop));
  await settle(Date.now());
  await sleep(3000);

  const results: Result[] = [];
  let prevUntil = 0;
  for (const [i, fault] of faults.entries()) {
    phase = i + 1;
    progress(`fault ${i + 1}/${faults.length}: ${fault.what}`);
    for (const id of fault.targets ?? []) expectExit(id);
    const at = Date.now();
    const extra: FaultExtra = { down: [], takeover: new Map() };
    const recovered = await fault.run(extra);
    progress(`  recovered after ${fmt(recovered - at)}; waiting for every kind to be answered 200`);
    const settled = await settle(recovered);
    await sleep(1500);
    const until = Date.now();
    const late = attempts.filter((a) => a.sent < prevUntil && a.answered >= at && a.status !== 200);
    if (late.length)
      progress(
        `  ${late.length} request(s) sent before this fault (during the previous phase) failed late: ${late
          .map((a) => `${a.kind} ${a.status} after ${fmt(a.answered - a.sent)}`)
          .join('; ')}`,
      );
    results.push(measure(fault, extra, at, recovered, until, phase, settled, prevUntil));
    prevUntil = until;
    const last = results[results.length - 1]!;
    const r = row(last);
    const slow = last.failures.filter((f) => f.answered - f.sent > 2500);
    if (slow.length)
      progress(
        `  failures slower than 2.5 s (kind status: sent → answered, relative to the fault): ${slow
          .map((f) => `${f.kind} ${f.status}: ${fmt(f.sent - at)} → ${fmt(f.answered - at)}`)
          .join('; ')}`,
      );
    progress(`  first fail ${r[1]}, failures ${r[2]}, first 200 ${r[4]}`);
  }
  phase = faults.length + 1;
  loadStopped = true;
  await loops;
  progress('load stopped; checking what was stored');
  const { lost, dup, ledger } = await account(sql, results);
  await sql.end({ timeout: 5 });

  const rows = [
    [
      'fault',
      'first fail',
      'failures (kind status×n)',
      'fail p50 / max',
      'first 200 after recovery',
      'lost',
      'dup',
      'other exits',
      'targets',
    ],
  ];
  for (const r of results) rows.push(row(r));
  const ok = logical.filter((l) => l.ok).length;
  say('');
  say(table(rows));
  say('');
  say(
    `${logical.length} requests (${ok} answered 200, ${attempts.length} attempts) over ${((Date.now() - T0) / 1000).toFixed(0)} s; ` +
      `lost ${[...lost.values()].flat().length}, duplicated ${[...dup.values()].flat().length}, ` +
      `exits nobody caused ${unexpected.length}${termCodes.length ? `; SIGTERM exits not 0: ${termCodes.join(', ')}` : ''}`,
  );
  for (const [ph, what] of [...lost, ...dup])
    say(`  phase ${ph}: ${what.slice(0, 5).join('; ')}${what.length > 5 ? ' …' : ''}`);
  const lostClicks = [...lost.values()]
    .flat()
    .filter((w) => w.startsWith('click '))
    .map((w) => w.slice(6));
  for (const line of await whereInKafka(lostClicks.slice(0, 20)).catch((err: unknown) => [
    `looking the lost clicks up in Kafka failed: ${(err as Error).message}`,
  ]))
    say(`  lost click ${line}`);
  const fourxx = new Map<string, number>();
  for (const l of logical)
    if (!l.ok && l.answer && typeof l.answer.error === 'string')
      fourxx.set(`${l.kind}: ${l.answer.error}`, (fourxx.get(`${l.kind}: ${l.answer.error}`) ?? 0) + 1);
  for (const [what, n] of fourxx) say(`  4xx answer ${what} ×${n}`);
  say(
    ledger.length
      ? `balances and ledger DIFFER: ${ledger.join('; ')}`
      : 'balances equal the ledger; every commission has its ledger entry',
  );
  let clusterMissed = 0;
  if (clusterMode) {
    const rowsC = [CLUSTER_HEADER, ...results.map((r) => clusterRow(r, attempts, sessionTimeoutMs))];
    clusterMissed = rowsC.slice(1).filter((r) => r[r.length - 1] !== 'met').length;
    say('');
    say(table(rowsC));
  }
  const missed = results.filter((r) => row(r)[8] !== 'met').length + clusterMissed;
  const accounting =
    results.filter((r) => accountingMisses(r).length > 0).length + termCodes.length + ledger.length;
  const dupOutside = [...dup.keys(), ...lost.keys()].filter((ph) => ph === 0 || ph > results.length).length;
  say(missed === 0 && termCodes.length === 0 ? 'every target met' : `${missed} fault(s) missed a target`);
  if (accounting > 0 || dupOutside > 0 || (values.strict && missed > 0)) code = 1;
} catch (err) {
  process.stderr.write(`chaos failed: ${(err as Error).message}\n${tail.slice(-30).join('\n')}\n`);
  code = 2;
} finally {
  progress('stopping');
  await cleanup();
  if (tracePath) await writeFile(tracePath, traced.join('\n') + '\n');
}
process.exit(code);
