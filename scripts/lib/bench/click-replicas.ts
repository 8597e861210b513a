// Phase (d) of bench:clicks (--replicas N, --brokers 3): the same offered rate and time as (c) against N web
// processes (sharing the port, SO_REUSEPORT) and N click workers, on the first broker or a three-node Kafka
// cluster (only Kafka: the same Postgres, so the seed and the zero-lost check cover (d) as well).
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../../shared/logger.ts';
import { createLogger } from '../../../shared/logger.ts';
import { loadConfig } from '../../../shared/config.ts';
import { createKafka, ensureTopics } from '../../../shared/pipeline/kafka.ts';
import type { Sql } from '../../../shared/db/sql.ts';
import { int, runLoad } from './bench.ts';
import type { CpuSnapshot, LoadCounters } from './bench.ts';
import type { BenchControl } from './control.ts';
import type { ClickBenchOutput } from './click-output.ts';
import type { ClickBenchProbe } from './click-probe.ts';
import type { ClickBenchResults } from './click-report.ts';
import { clickRequests, warmKafka } from './click-traffic.ts';
import type { Seed } from './click-traffic.ts';
import { spawnService, waitForWeb } from '../stack/services.ts';
import type { ServiceProcess } from '../stack/services.ts';
import { freePort, STACK_DIR } from '../stack/stack.ts';
import { startStack } from '../stack/start.ts';
import type { Stack } from '../stack/start.ts';

export interface ReplicasOptions {
  control: BenchControl;
  output: ClickBenchOutput;
  probe: ClickBenchProbe;
  sql: Sql;
  seed: Seed;
  log: Logger;
  /** The first stack (its Postgres is (d)'s). */
  stack: Stack;
  /** The services' environment. */
  env: Record<string, string>;
  prefix: string;
  webPort: number;
  replicas: number;
  brokers: number;
  rate: number;
  seconds: number;
  connections: number;
  kafkaWarmupSeconds: number;
  keep: boolean;
  /** Every accepted click_id, for the zero-lost check. */
  acceptedIds: string[];
}

/** Runs (d); the web process and the click worker of (a)-(c) must be stopped first. */
export async function replicasPhase(
  o: ReplicasOptions,
  dCounters: LoadCounters,
): Promise<NonNullable<ClickBenchResults['d']>> {
  const { control, output, probe, sql, seed, log, stack, env, prefix, webPort, acceptedIds } = o;
  const { pids } = probe;
  const { signal } = control;
  const unlessAborted = <T>(p: Promise<T>): Promise<T> => control.unlessAborted(p);
  const { workerWatcher, onWebLine, onWorkerLine } = output;
  const linkIds = seed.links.map((l) => l.id);
  let t: CpuSnapshot;
  output.setPhase(
    `(d) ${o.replicas} web + ${o.replicas} click workers, ${o.brokers} broker(s): starting`,
    null,
  );
  let dEnv = env;
  let kafkaLine = 'the same broker as (a)-(c)';
  if (o.brokers > 1) {
    // Only Kafka: the same Postgres, so the seed and the zero-lost check cover (d) as well.
    const clusterP = startStack({
      name: 'bench-cluster',
      brokers: o.brokers,
      fresh: true,
      env: { DATABASE_URL: stack.databaseUrl },
      log,
    });
    control.onCleanup('Kafka cluster', async () => (await clusterP.catch(() => null))?.stop());
    if (!o.keep)
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
    t = probe.snap();
    const warm = await unlessAborted(
      warmKafka(control, dKafka, dAdmin, `${prefix}warmup`, dCfg.clickPartitions, o.kafkaWarmupSeconds),
    );
    probe.cpuPhase('(d) Kafka cluster warm-up (not measured)', t);
    kafkaLine = `${o.brokers} nodes, replication ${dCfg.kafkaReplicationFactor}, min.insync.replicas ${dCfg.kafkaMinInsyncReplicas}; warmed up: ${warm}`;
  }
  const webs: ServiceProcess[] = [];
  const workers: ServiceProcess[] = [];
  for (let r = 0; r < o.replicas; r++) {
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
  for (let r = 0; r < o.replicas; r++) {
    const k = spawnService('click-worker', { env: { ...dEnv, LOG_LEVEL: 'info' }, onLine: onWorkerLine });
    control.onCleanup(`click worker ${r + 1} of (d)`, () => k.stop());
    control.guard(k);
    workers.push(k);
    await unlessAborted(workerWatcher.waitFor(/click worker running/, 60_000));
  }
  pids.web = webs.map((w) => w.child.pid!);
  pids.worker = workers.map((w) => w.child.pid!);
  output.setPhase(
    `(d) offered ${int(o.rate)}/s for ${o.seconds} s, ${o.replicas} + ${o.replicas} processes`,
    dCounters,
  );
  t = probe.snap();
  const run = await runLoad({
    url: `http://127.0.0.1:${webPort}/api/v1/track/click`,
    requests: clickRequests(seed, 'd'),
    connections: o.connections,
    amount: o.rate * o.seconds,
    rate: o.rate,
    instances: 5,
    staggerMs: 200,
    maxMs: o.seconds * 2_500 + 30_000,
    counters: dCounters,
    clickIds: acceptedIds,
    signal,
  });
  signal.throwIfAborted();
  probe.cpuPhase('(d) offering', t);
  output.setPhase('(d) waiting for the workers to catch up', dCounters);
  t = probe.snap();
  const drainD = await probe.drainBacklog(540_000);
  probe.cpuPhase('(d) after offering, until all persisted', t);
  const [dRow] = await sql<{ n: string; p50: number | null; p99: number | null }[]>`
    select count(*)::text as n,
           percentile_cont(0.5) within group (order by lag_ms) as p50,
           percentile_cont(0.99) within group (order by lag_ms) as p99
    from (select extract(epoch from created_at - click_timestamp)::float8 * 1000 as lag_ms
          from click_events
          where link_id = any(${linkIds}::bigint[]) and not is_test
            and page_url like 'https://shop.example/bench/d/%') s`;
  const rows = Number(dRow!.n);
  return {
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
