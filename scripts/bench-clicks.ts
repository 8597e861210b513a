// npm run bench:clicks: how fast the click path is on this machine, end to end, and that it loses nothing.
// USAGE says what each phase (baseline, ingress alone, drain, fixed rate) measures. The phases run here; the
// traffic, the progress output, the zero-lost check and the report are in scripts/lib/click-bench-*.ts.
import { rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { cli } from './lib/cli.ts';
import { LOAD_OPTIONS } from './lib/bench-run.ts';
import { freePort, STACK_DIR } from './lib/stack.ts';
import { startStack } from './lib/start-stack.ts';
import type { Stack } from './lib/start-stack.ts';
import { spawnService, waitForWeb } from './lib/services.ts';
import type { ServiceProcess } from './lib/services.ts';
import { LoadCounters, postmasterPid, int, runLoad, startBaseline } from './lib/bench.ts';
import type { CpuSnapshot } from './lib/bench.ts';
import { BenchControl } from './lib/bench-control.ts';
import { ClickBenchOutput } from './lib/click-bench-output.ts';
import { clickRequests, closedLoop, seedBench, warmKafka } from './lib/click-bench-traffic.ts';
import { verifyClicks } from './lib/click-bench-verify.ts';
import { clickBenchReport } from './lib/click-bench-report.ts';
import { ClickBenchProbe } from './lib/click-bench-probe.ts';
import { breakdownCost } from './lib/click-bench-cost.ts';
import type { CostRound } from './lib/click-bench-cost.ts';
import type { ClickBenchResults } from './lib/click-bench-report.ts';
import { migrate } from '../shared/db/migrate.ts';
import { createLogger } from '../shared/logger.ts';
import { createSql } from '../shared/db/sql.ts';
import { loadConfig } from '../shared/config.ts';
import { createKafka, ensureTopics } from '../shared/pipeline/kafka.ts';
import { topicName } from '../shared/contracts/topics.ts';

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

const control = new BenchControl();
const { signal } = control;
const unlessAborted = <T>(p: Promise<T>): Promise<T> => control.unlessAborted(p);
const output = new ClickBenchOutput();
const { workerWatcher, onWebLine, onWorkerLine } = output;
const setPhase = (phase: string, counters: LoadCounters | null) => output.setPhase(phase, counters);
const loopOptions = {
  connections: CONNECTIONS,
  signal,
  warmupSeconds: WARMUP_SECONDS,
  loadSeconds: LOAD_SECONDS,
};

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
    control.onCleanup(`removing ${stackDir}`, () => rm(stackDir, { recursive: true, force: true }));
  }
  const stackP = startStack({ name: 'bench', fresh: true, fast: FAST, log });
  control.onCleanup('Postgres + Kafka', async () => (await stackP.catch(() => null))?.stop());
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
  await unlessAborted(control.retrying('creating the topics', 3, () => ensureTopics(kafka, cfg, log)));
  // Polled every second while the worker has no group yet: its "coordinator not available" answers are noise.
  const quietKafka = createKafka(cfg, createLogger('bench-kafka', 'silent'));
  const admin = quietKafka.admin();
  control.onCleanup('Kafka admin', () => admin.disconnect());
  await unlessAborted(admin.connect());
  const sql = createSql(cfg.databaseUrl, 3, 'svc-bench');
  control.onCleanup('Postgres pool', () => sql.end({ timeout: 5 }));
  const seed = await unlessAborted(seedBench(sql, runId, { partners: PARTNERS, links: LINKS }));
  const linkIds = seed.links.map((l) => l.id);

  const pgPid = stack.postgres ? postmasterPid(join(stackDir, 'postgres')) : undefined;
  const probe = new ClickBenchProbe({
    sql,
    linkIds,
    topic: topicName(prefix, 'clicks'),
    groupId: `${prefix}click-worker`,
    cores,
    control,
    output,
    admin,
    pids: { bench: process.pid, postgres: pgPid, kafka: stack.kafka?.process.pid },
  });
  const { pids } = probe;
  const snap = () => probe.snap();
  const cpuPhase = (phase: string, from: CpuSnapshot) => probe.cpuPhase(phase, from);
  probe.startPolling();
  let t: CpuSnapshot;

  // Kafka warm-up -----------------------------------------------------------------------------------
  setPhase('warming up the Kafka broker', null);
  t = snap();
  const kafkaWarm = await unlessAborted(
    warmKafka(control, quietKafka, admin, `${prefix}warmup`, cfg.clickPartitions, KAFKA_WARMUP_SECONDS),
  );
  cpuPhase('Kafka broker warm-up (not measured)', t);

  // (a) baseline ------------------------------------------------------------------------------------
  const aWarm = new LoadCounters();
  const aCounters = new LoadCounters();
  setPhase('(a) bare Fastify baseline', aCounters);
  const basePort = await freePort();
  const baseline = startBaseline(basePort);
  control.onCleanup('baseline server', () => baseline.stop());
  pids.baseline = baseline.child.pid;
  await unlessAborted(baseline.ready);
  const bReq = clickRequests(seed, 'b');
  const a = await closedLoop(
    loopOptions,
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
  control.onCleanup('web', () => web.stop());
  control.guard(web);
  pids.web = web.child.pid;
  await unlessAborted(waitForWeb(web, webPort));
  const b = await closedLoop(
    loopOptions,
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
  control.onCleanup('click worker', () => worker.stop());
  control.guard(worker);
  pids.worker = worker.child.pid;
  // Its "running" line only refines the boot time; the drain is judged by committed offsets.
  await unlessAborted(workerWatcher.waitFor(/click worker running/, 30_000)).catch((err: Error) => {
    if (signal.aborted) throw err;
  });
  const workerReadyAt = Date.now();
  const backlogB = await probe.kafkaBacklog();
  const drainB = await probe.waitDrained(60_000 + Math.min(540_000, backlogB * 2));
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
    signal,
  });
  signal.throwIfAborted();
  cpuPhase('(c) offering', t);
  setPhase('(c) waiting for the worker to catch up', cCounters);
  t = snap();
  const backlogAtEnd = await probe.kafkaBacklog();
  const drainC = await probe.waitDrained(60_000 + Math.min(540_000, backlogAtEnd * 2));
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
  const statusInC = output.workerStatus.filter(
    (s) => s.at > c.startedAt + 10_500 && s.at <= drainC.at + 10_000,
  );

  // (d) the same load on replicas and/or a three-node cluster ---------------------------------------
  const dCounters = new LoadCounters();
  let d: ClickBenchResults['d'] = null;
  if (PHASE_D) {
    setPhase(`(d) ${REPLICAS} web + ${REPLICAS} click workers, ${BROKERS} broker(s): starting`, null);
    control.retire(web, worker);
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
      control.onCleanup('Kafka cluster', async () => (await clusterP.catch(() => null))?.stop());
      if (!values.keep)
        control.onCleanup('removing the cluster data', () =>
          rm(join(STACK_DIR, 'bench-cluster'), { recursive: true, force: true }),
        );
      const clusterStack = await unlessAborted(clusterP);
      dEnv = { ...env, KAFKA_BROKERS: clusterStack.kafkaBrokers, ...clusterStack.kafkaEnv };
      const dCfg = loadConfig({ ...process.env, ...dEnv });
      const dKafka = createKafka(dCfg, log);
      await unlessAborted(
        control.retrying('creating the topics on the cluster', 3, () => ensureTopics(dKafka, dCfg, log)),
      );
      const dAdmin = createKafka(dCfg, createLogger('bench-kafka', 'silent')).admin();
      control.onCleanup('cluster admin', () => dAdmin.disconnect());
      await unlessAborted(dAdmin.connect());
      probe.admin = dAdmin;
      pids.kafka = clusterStack.kafkaNodes().map((n) => n.process.pid!);
      t = snap();
      const warm = await unlessAborted(
        warmKafka(control, dKafka, dAdmin, `${prefix}warmup`, dCfg.clickPartitions, KAFKA_WARMUP_SECONDS),
      );
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
      control.onCleanup(`web ${r + 1} of (d)`, () => w.stop());
      control.guard(w);
      webs.push(w);
      // Each one ready on its own operations port (the shared port answers for any of them).
      await unlessAborted(waitForWeb(w, opsPort));
    }
    for (let r = 0; r < REPLICAS; r++) {
      const k = spawnService('click-worker', { env: { ...dEnv, LOG_LEVEL: 'info' }, onLine: onWorkerLine });
      control.onCleanup(`click worker ${r + 1} of (d)`, () => k.stop());
      control.guard(k);
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
      signal,
    });
    signal.throwIfAborted();
    cpuPhase('(d) offering', t);
    setPhase('(d) waiting for the workers to catch up', dCounters);
    t = snap();
    const drainD = await probe.drainBacklog(540_000);
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
      counters: dCounters,
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
  const runs = [bWarm, bCounters, cCounters, dCounters];
  const verification = await verifyClicks(sql, seed, runs, acceptedIds, output.startedAt);
  const problems = verification.problems;
  if (d?.drain.timedOut) problems.unshift('the workers did not catch up after (d) in time');
  if (drainC.timedOut) problems.unshift('the worker did not catch up after (c) in time');
  if (drainB.timedOut) problems.unshift("the worker did not drain (b)'s backlog in time");

  // (e) the breakdown rollup's cost ------------------------------------------------------------------
  let cost: CostRound[] = [];
  if (BREAKDOWN_COST) {
    control.retire(worker);
    await worker.stop();
    const url = `http://127.0.0.1:${webPort}/api/v1/track/click`;
    const o = { control, output, probe, sql, seed, env, url, connections: CONNECTIONS, clicks: COST_CLICKS };
    cost = await breakdownCost(o, problems);
  }

  // Report ------------------------------------------------------------------------------------------
  const results: ClickBenchResults = {
    cores,
    connections: CONNECTIONS,
    links: LINKS,
    postgres: external ? 'external' : FAST ? 'fsync OFF (--fast)' : 'durable (fsync on)',
    cfg,
    kafkaWarm,
    rate: RATE,
    seconds: SECONDS,
    replicas: REPLICAS,
    costClicks: COST_CLICKS,
    a,
    aCounters,
    b,
    bWarm,
    bCounters,
    drain: {
      rows: rowsB,
      seconds: drainSeconds,
      timedOut: drainB.timedOut,
      bootSeconds: (workerReadyAt - workerSpawnAt) / 1000,
    },
    c: {
      run: c,
      counters: cCounters,
      rows: rowsC,
      persistSeconds,
      persistedRate: persistedRateC,
      inWindowRate,
      backlogAtEnd,
      timedOut: drainC.timedOut,
      lagP50,
      lagP99,
      lagMax: cRow!.max ?? 0,
      status: statusInC,
    },
    workerRetries: output.workerRetries,
    d,
    verification,
    cost,
    cpuPhases: probe.cpuPhases,
  };
  process.stdout.write(clickBenchReport(results));
  return problems.length === 0 ? 0 : 1;
}

let code = 1;
try {
  code = await main();
} catch (err) {
  if (!control.interrupted) process.stderr.write(`\nbench failed: ${(err as Error).stack ?? String(err)}\n`);
  code = control.interrupted ? 130 : 1;
}
output.stop();
process.stderr.write('tearing down...\n');
await control.cleanup();
process.exit(code);
