// npm run chaos: the project's own fault suite. A throwaway Postgres + Kafka and every service process,
// a steady mixed load (clicks with event_ids, leads, sales, refunds; every request retried as a careful
// client would: clicks with the same event_id, commands with the same Idempotency-Key), and faults one at
// a time. Per fault it prints how callers saw the fault and the recovery, and afterwards whether anything
// answered 200 was lost or stored twice, and whether any process exited that was not the one hit.
// --cluster: the same on three Kafka nodes with two processes of everything, and the faults a cluster is
// for (scripts/lib/chaos-cluster.ts). The load is scripts/lib/chaos-load.ts, the accounting afterwards
// chaos-account.ts, the tables chaos-report.ts; here: the options, the faults, the processes and the run.
import { join } from 'node:path';
import { rm, writeFile } from 'node:fs/promises';
import { cli } from './lib/cli.ts';
import { STACK_DIR, freePort, onStopSignal, startPostgres, waitForPort } from './lib/stack.ts';
import { startKafka, startKafkaCluster } from './lib/kafka-server.ts';
import { clusterTopicEnv } from './lib/start-stack.ts';
import type { PostgresServer } from './lib/stack.ts';
import type { KafkaCluster, KafkaServer } from './lib/kafka-server.ts';
import { ENTRIES, spawnService } from './lib/services.ts';
import { clusterFaults, clusterRow, CLUSTER_HEADER, SHORT_CLUSTER_FAULTS } from './lib/chaos-cluster.ts';
import type { Fault, FaultExtra } from './lib/chaos-cluster.ts';
import { loadConfig } from '../shared/config.ts';
import { createKafka } from '../shared/pipeline/kafka.ts';
import type { ServiceName, ServiceProcess } from './lib/services.ts';
import { migrate } from '../shared/db/migrate.ts';
import { createLogger } from '../shared/logger.ts';
import { createSql } from '../shared/db/sql.ts';
import type { Sql } from '../shared/db/sql.ts';
import { ChaosLoad, seedChaos } from './lib/chaos-load.ts';
import { account, whereInKafka } from './lib/chaos-account.ts';
import { accountingMisses, faultTable, fmt, fourxxLines, measure, row, table } from './lib/chaos-report.ts';
import type { Result } from './lib/chaos-report.ts';

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
/** The load, once the services run. */
let load: ChaosLoad;

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
  const seed = await seedChaos(sql);
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
  const { lost, dup, ledger } = await account(sql, seed.programId, logical, results);
  await sql.end({ timeout: 5 });

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
