// npm run chaos: the project's own fault suite. A throwaway Postgres + Kafka and every service process,
// a steady mixed load (clicks with event_ids, leads, sales, refunds; every request retried as a careful
// client would: clicks with the same event_id, commands with the same Idempotency-Key), and faults one at
// a time. Per fault it prints how callers saw the fault and the recovery, and afterwards whether anything
// answered 200 was lost or stored twice, and whether any process exited that was not the one hit.
// --cluster: the same on three Kafka nodes with two processes of everything, and the faults a cluster is
// for (scripts/lib/chaos/cluster.ts). The load is scripts/lib/chaos/load.ts, the accounting afterwards
// chaos/account.ts, the tables chaos/report.ts; here: the options, the faults, the processes and the run.
import { join } from 'node:path';
import { rm, writeFile } from 'node:fs/promises';
import { cli } from './lib/cli.ts';
import { CHAOS_USAGE } from './lib/chaos/usage.ts';
import { STACK_DIR, freePort, onStopSignal, startPostgres, waitForPort } from './lib/stack/stack.ts';
import { startKafka, startKafkaCluster } from './lib/stack/kafka-server.ts';
import { clusterTopicEnv } from './lib/stack/start.ts';
import type { PostgresServer } from './lib/stack/stack.ts';
import type { KafkaCluster, KafkaServer } from './lib/stack/kafka-server.ts';
import { ENTRIES, spawnService } from './lib/stack/services.ts';
import { clusterFaults, clusterRow, CLUSTER_HEADER, SHORT_CLUSTER_FAULTS } from './lib/chaos/cluster.ts';
import { harnessFaults } from './lib/chaos/harness.ts';
import {
  SHORT_SUPERVISED_CLUSTER_FAULTS,
  SHORT_SUPERVISED_FAULTS,
  SupervisedStack,
  supervisedFaults,
} from './lib/chaos/supervised.ts';
import type { Fault, FaultExtra } from './lib/chaos/cluster.ts';
import { loadConfig } from '../shared/config.ts';
import { createKafka } from '../shared/pipeline/kafka.ts';
import type { ServiceName, ServiceProcess } from './lib/stack/services.ts';
import { migrate } from '../shared/db/migrate.ts';
import { createLogger } from '../shared/logger.ts';
import { createSql } from '../shared/db/sql.ts';
import type { Sql } from '../shared/db/sql.ts';
import { ChaosLoad, seedChaos } from './lib/chaos/load.ts';
import type { ChaosSeed } from './lib/chaos/load.ts';
import { account, whereInKafka } from './lib/chaos/account.ts';
import { accountingMisses, faultTable, fmt, fourxxLines, measure, row, table } from './lib/chaos/report.ts';
import type { Result } from './lib/chaos/report.ts';

const { values, int } = cli(CHAOS_USAGE, {
  short: { type: 'boolean' },
  faults: { type: 'string' },
  cluster: { type: 'boolean' },
  supervised: { type: 'boolean' },
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
const supervisedMode = values.supervised === true;
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
  if (supervisedMode) return supervisedFaultsHere();
  if (clusterMode) return clusterFaultsHere();
  return harnessFaults({
    services: SERVICES,
    first,
    kill: (id) => procs.get(id)!.kill(),
    stop: async (id) => {
      const p = procs.get(id)!;
      await p.stop();
      return p.exited;
    },
    restart,
    restartBroker: async (downMs) => {
      kafka.kill();
      await kafka.exited;
      await sleep(downMs);
      kafka = await startKafka(kafkaOpts);
    },
    restartPostgres: async (downMs) => {
      await postgres.stop();
      await sleep(downMs);
      postgres = await startPostgres(pgOpts);
    },
    databaseUrl: () => databaseUrl,
    termCodes,
  });
}

function clusterFaultsHere(): Fault[] {
  return clusterFaults({
    brokers: {
      count: kafkaCluster.nodes.length,
      kill: async (node) => {
        const server = kafkaCluster.nodes[node - 1]!;
        server.kill();
        await server.exited;
      },
      stop: (node) => kafkaCluster.nodes[node - 1]!.stop(),
      start: async (node) => {
        await kafkaCluster.restart(node);
      },
      activeController: () => kafkaCluster.activeController(),
    },
    admin: () => admin,
    sql: () => chaosSql,
    prefix: PREFIX,
    holdMs,
    boundMs: settleMaxMs,
    victims: SERVICES.map(first),
    pidOf: (id) => Promise.resolve(procs.get(id)!.child.pid!),
    kill: (id) => procs.get(id)!.kill(),
    restart,
    progress,
  });
}

/** The faults through the start script's supervisor (--supervised): nothing restarted here. */
function supervisedFaultsHere(): Fault[] {
  const own = supervisedFaults(
    supervised,
    INSTANCES.map((i) => i.id),
    termCodes,
  );
  if (!clusterMode) return own;
  /** The pid each victim of kill-replicas had: it is back once another process runs it. */
  const hitPids = new Map<string, number>();
  const cluster = clusterFaults({
    brokers: supervised.brokerNodes(),
    admin: () => admin,
    sql: () => chaosSql,
    prefix: PREFIX,
    // A killed node is down until the supervisor has it back, not for a hold of the harness's.
    holdMs: 0,
    boundMs: settleMaxMs,
    victims: SERVICES.map(first),
    pidOf: (id) => supervised.pidOf(id),
    kill: async (id) => {
      hitPids.set(id, (await supervised.hit(id)).pid);
    },
    restart: (id) => supervised.back(id, hitPids.get(id) ?? -1),
    progress,
  });
  return [...cluster, ...own.filter((f) => f.name === 'pg-kill')];
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
/** --supervised: the start script and what it supervises. */
let supervised: SupervisedStack;
let seed!: ChaosSeed;
/** The harness's own view of the cluster (leaders, replicas in sync) and of Postgres. */
let admin!: ReturnType<ReturnType<typeof createKafka>['admin']>;
let kafkaBrokers = '';
let chaosSql!: Sql;
let databaseUrl = '';
let sessionTimeoutMs = 0;
let baseUrl = '';
let env: Record<string, string> = {};
const tail: string[] = [];
/** The load, once the services run. */
let load: ChaosLoad;

async function cleanup(): Promise<void> {
  stopping = true;
  if (supervised) {
    const code = await supervised.stop().catch(() => null);
    if (code !== 0)
      progress(`the start script's own stop ended with ${code === null ? 'a kill' : `exit ${code}`}`);
  }
  await Promise.allSettled([...procs.values()].map((p) => p.stop()));
  await admin?.disconnect().catch(() => {});
  await Promise.allSettled([kafka?.stop(), kafkaCluster?.stop(), postgres?.stop()]);
  await rm(dir, { recursive: true, force: true });
}
onStopSignal(async () => {
  await cleanup();
  process.exit(130);
});

/**
 * Why a process died, from the tail of its log, so a CI log says it (the whole log is in --trace): its last
 * error lines (pino error/fatal, or an uncaught exception's `SomeError: …` line), else its last lines.
 */
function lastWords(id: string, own: readonly string[]): string[] {
  const lines = own
    .filter((l) => l.trim() !== '')
    .map((l) => `[${id}] ${l.length > 400 ? `${l.slice(0, 400)}…` : l}`);
  const errors = lines.filter((l) => /^\S+ (\{.*"level":(50|60)|\w*Error\b|Uncaught)/.test(l));
  return (errors.length ? errors : lines).slice(-3);
}

function spawn(id: string): ServiceProcess {
  /** This process's own last lines (not its predecessor's). */
  const own: string[] = [];
  const p = spawnService(serviceOf(id), {
    env: { ...env, OPS_PORT: String(opsPorts.get(id)) },
    onLine: (line) => {
      trace({ ev: 'log', id, line });
      own.push(line);
      if (own.length > 60) own.shift();
      tail.push(`[${id}] ${line}`);
      if (tail.length > 400) tail.splice(0, 100);
    },
  });
  procs.set(id, p);
  void p.exited.then((code) => {
    if (!stopping && !expected.has(p)) {
      unexpected.push({ at: Date.now(), name: id, code });
      progress(`UNEXPECTED EXIT: ${id} exited with ${code}; restarting it`);
      for (const line of lastWords(id, own)) progress(`  ${line}`);
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

/** Postgres, Kafka and every service started by the harness, which also restarts what its faults hit. */
async function startHere(): Promise<void> {
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
  chaosSql = createSql(databaseUrl, 2, 'svc-chaos');
  kafkaBrokers = brokers;
  admin = createKafka({ kafkaBrokers: brokers.split(','), kafkaClientId: 'svc-chaos' }, log).admin();
  await admin.connect();
  seed = await seedChaos(chaosSql);
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
}

/** Everything started by the start script (--supervised), whose supervisor restarts what the faults hit. */
async function startSupervised(): Promise<void> {
  progress(
    `starting scripts/start.ts${clusterMode ? ' --brokers 3' : ''}${replicas > 1 ? ` --replicas ${replicas}` : ''} (supervised)`,
  );
  supervised = await SupervisedStack.start({
    dir,
    cluster: clusterMode,
    replicas,
    env: { KAFKA_PREFIX: PREFIX, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' },
    onLine: (line) => {
      trace({ ev: 'log', line });
      tail.push(line);
      if (tail.length > 400) tail.splice(0, 100);
    },
    onUnexpectedExit: (unit, exitCode, lastLines) => {
      unexpected.push({ at: Date.now(), name: unit, code: exitCode });
      progress(`UNEXPECTED EXIT: ${unit} exited with ${exitCode}; the supervisor restarts it`);
      for (const line of lastLines.slice(-3))
        progress(`  [${unit}] ${line.length > 400 ? `${line.slice(0, 400)}…` : line}`);
    },
  });
  databaseUrl = supervised.databaseUrl;
  kafkaBrokers = supervised.brokers;
  baseUrl = supervised.baseUrl;
  chaosSql = createSql(databaseUrl, 2, 'svc-chaos');
  admin = createKafka({ kafkaBrokers: kafkaBrokers.split(','), kafkaClientId: 'svc-chaos' }, log).admin();
  await admin.connect();
  seed = await seedChaos(chaosSql);
  sessionTimeoutMs = loadConfig({ ...process.env, KAFKA_PREFIX: PREFIX }).kafkaSessionTimeoutMs;
}

// ------------------------------------------------------------------------------------------------
// The run

let code = 0;
try {
  if (supervisedMode) await startSupervised();
  else await startHere();
  let faults = allFaults();
  if (values.short) {
    const pick = supervisedMode
      ? clusterMode
        ? SHORT_SUPERVISED_CLUSTER_FAULTS
        : SHORT_SUPERVISED_FAULTS
      : clusterMode
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
  load = new ChaosLoad(baseUrl, seed, trace, T0);
  const { attempts, logical } = load;
  const loops = Promise.all(Array.from({ length: concurrency }, () => load.loop()));
  await load.settle(Date.now(), settleMaxMs);
  await sleep(3000);

  const results: Result[] = [];
  let prevUntil = 0;
  for (const [i, fault] of faults.entries()) {
    load.phase = i + 1;
    progress(`fault ${i + 1}/${faults.length}: ${fault.what}`);
    for (const id of fault.targets ?? []) expectExit(id);
    const at = Date.now();
    const extra: FaultExtra = { down: [], takeover: new Map() };
    const recovered = await fault.run(extra);
    progress(`  recovered after ${fmt(recovered - at)}; waiting for every kind to be answered 200`);
    const settled = await load.settle(recovered, settleMaxMs);
    await sleep(1500);
    const until = Date.now();
    const late = attempts.filter((a) => a.sent < prevUntil && a.answered >= at && a.status !== 200);
    if (late.length)
      progress(
        `  ${late.length} request(s) sent before this fault (during the previous phase) failed late: ${late
          .map((a) => `${a.kind} ${a.status} after ${fmt(a.answered - a.sent)}`)
          .join('; ')}`,
      );
    results.push(
      measure(attempts, unexpected, fault, extra, at, recovered, until, load.phase, settled, prevUntil),
    );
    prevUntil = until;
    const last = results[results.length - 1]!;
    const r = row(last, settleMaxMs);
    const slow = last.failures.filter((f) => f.answered - f.sent > 2500);
    if (slow.length)
      progress(
        `  failures slower than 2.5 s (kind status: sent → answered, relative to the fault): ${slow
          .map((f) => `${f.kind} ${f.status}: ${fmt(f.sent - at)} → ${fmt(f.answered - at)}`)
          .join('; ')}`,
      );
    progress(`  first fail ${r[1]}, failures ${r[2]}, first 200 ${r[4]}`);
  }
  load.phase = faults.length + 1;
  load.stopped = true;
  await loops;
  progress('load stopped; checking what was stored');
  const { lost, dup, ledger } = await account(chaosSql, seed.programId, logical, results);
  await chaosSql.end({ timeout: 5 });

  const ok = logical.filter((l) => l.ok).length;
  say('');
  say(faultTable(results, settleMaxMs));
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
  const inKafka = { admin, brokers: kafkaBrokers, prefix: PREFIX, log };
  for (const line of await whereInKafka(inKafka, lostClicks.slice(0, 20)).catch((err: unknown) => [
    `looking the lost clicks up in Kafka failed: ${(err as Error).message}`,
  ]))
    say(`  lost click ${line}`);
  for (const line of fourxxLines(logical)) say(line);
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
  const missed = results.filter((r) => row(r, settleMaxMs)[8] !== 'met').length + clusterMissed;
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
