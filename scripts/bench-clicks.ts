// npm run bench:clicks: how fast the click path is on this machine, end to end, and that it loses nothing.
// USAGE (lib/bench/click-usage.ts) says what each phase measures. Phases (a)-(c) run here; (d) (replicas), (e)
// (breakdown cost), (f) and (g) (traffic quality: a mixed run, the classifier's cost) in their own files; the
// traffic, the progress output, the zero-lost check and the report are in scripts/lib/bench/click-*.ts.
import { rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { cli } from './lib/cli.ts';
import { LOAD_OPTIONS } from './lib/bench/run.ts';
import { freePort, STACK_DIR } from './lib/stack/stack.ts';
import { startStack } from './lib/stack/start.ts';
import type { Stack } from './lib/stack/start.ts';
import { spawnService, waitForWeb } from './lib/stack/services.ts';
import { LoadCounters, postmasterPid, int, runLoad, startBaseline } from './lib/bench/bench.ts';
import type { CpuSnapshot } from './lib/bench/bench.ts';
import { BenchControl } from './lib/bench/control.ts';
import { ClickBenchOutput } from './lib/bench/click-output.ts';
import { clickRequests, closedLoop, seedBench, warmKafka } from './lib/bench/click-traffic.ts';
import { verifyClicks } from './lib/bench/click-verify.ts';
import { clickBenchReport } from './lib/bench/click-report.ts';
import { USAGE } from './lib/bench/click-usage.ts';
import { replicasPhase } from './lib/bench/click-replicas.ts';
import { classifierCost, mixedRun, qualityReport } from './lib/bench/click-quality.ts';
import type { ClassifierRound, MixedResult } from './lib/bench/click-quality.ts';
import { ClickBenchProbe } from './lib/bench/click-probe.ts';
import { breakdownCost } from './lib/bench/click-cost.ts';
import type { CostRound } from './lib/bench/click-cost.ts';
import type { ClickBenchResults } from './lib/bench/click-report.ts';
import { migrate } from '../shared/db/migrate.ts';
import { createLogger } from '../shared/logger.ts';
import { createSql } from '../shared/db/sql.ts';
import { loadConfig } from '../shared/config.ts';
import { createKafka, ensureTopics } from '../shared/pipeline/kafka.ts';
import { topicName } from '../shared/contracts/topics.ts';

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
  'bot-share': { type: 'string' },
  'classifier-cost': { type: 'boolean' },
});

const RATE = intArg('rate', 6000, 1_000_000);
const SECONDS = intArg('seconds', 60, 3600);
const LOAD_SECONDS = intArg('load-seconds', 10, 600);
const CONNECTIONS = intArg('connections', 50, 1000);
const FAST = values.fast ?? false;
const BREAKDOWN_COST = (values['breakdown-cost'] as boolean | undefined) ?? false;
const COST_CLICKS = intArg('cost-clicks', 60_000, 10_000_000);
const BOT_SHARE = intArg('bot-share', 0, 100, 0);
const CLASSIFIER_COST = (values['classifier-cost'] as boolean | undefined) ?? false;
const REPLICAS = intArg('replicas', 1, 8);
const BROKERS = oneOf('brokers', 1, [1, 3]);
/** Phase (d): the replicated and/or replicated-Kafka run beside (c). */
const PHASE_D = REPLICAS > 1 || BROKERS > 1;
if ((BREAKDOWN_COST || CLASSIFIER_COST) && PHASE_D) {
  // (e) and (g) drain on the first stack's broker with one worker: a run measures one or the other.
  process.stderr.write(
    '--breakdown-cost and --classifier-cost run alone: leave out --replicas and --brokers\n',
  );
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

  // (f) mixed traffic: bots and prefetches filtered, counted nowhere ------------------------------------
  let mixed: MixedResult | null = null;
  if (BOT_SHARE > 0) {
    const mixedSeed = await unlessAborted(seedBench(sql, `${runId}f`, { partners: PARTNERS, links: LINKS }));
    const url = `http://127.0.0.1:${webPort}/api/v1/track/click`;
    const o = { control, output, probe, sql, url, connections: CONNECTIONS, clicks: COST_CLICKS };
    mixed = await mixedRun({ ...o, seed: mixedSeed, percent: BOT_SHARE });
  }

  // (d) the same load on replicas and/or a three-node cluster ---------------------------------------
  const dCounters = new LoadCounters();
  let d: ClickBenchResults['d'] = null;
  if (PHASE_D) {
    control.retire(web, worker);
    await web.stop();
    await worker.stop();
    delete pids.web;
    delete pids.worker;
    d = await replicasPhase(
      {
        ...{ control, output, probe, sql, seed, log, stack, env, prefix, webPort, acceptedIds },
        ...{ replicas: REPLICAS, brokers: BROKERS, rate: RATE, seconds: SECONDS, connections: CONNECTIONS },
        kafkaWarmupSeconds: KAFKA_WARMUP_SECONDS,
        keep: values.keep ?? false,
      },
      dCounters,
    );
  }

  // Zero lost ---------------------------------------------------------------------------------------
  setPhase('verifying', null);
  const runs = [bWarm, bCounters, cCounters, dCounters];
  const verification = await verifyClicks(sql, seed, runs, acceptedIds, output.startedAt);
  const problems = verification.problems;
  if (d?.drain.timedOut) problems.unshift('the workers did not catch up after (d) in time');
  if (drainC.timedOut) problems.unshift('the worker did not catch up after (c) in time');
  if (drainB.timedOut) problems.unshift("the worker did not drain (b)'s backlog in time");
  if (mixed) problems.push(...mixed.problems);

  // (e) the breakdown rollup's cost ------------------------------------------------------------------
  let cost: CostRound[] = [];
  if (BREAKDOWN_COST) {
    control.retire(worker);
    await worker.stop();
    const url = `http://127.0.0.1:${webPort}/api/v1/track/click`;
    const o = { control, output, probe, sql, seed, env, url, connections: CONNECTIONS, clicks: COST_CLICKS };
    cost = await breakdownCost(o, problems);
  }

  // (g) the click classifier's cost ------------------------------------------------------------------
  let classifier: ClassifierRound[] = [];
  if (CLASSIFIER_COST) {
    control.retire(web, worker);
    await worker.stop();
    await web.stop();
    const o = {
      control,
      output,
      probe,
      sql,
      seed,
      env,
      webPort,
      connections: CONNECTIONS,
      clicks: COST_CLICKS,
    };
    classifier = await classifierCost(o, problems);
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
  process.stdout.write(clickBenchReport(results) + qualityReport(mixed, classifier, COST_CLICKS));
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
