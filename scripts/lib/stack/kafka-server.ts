// The local Apache Kafka: a single-node broker (KRaft, combined broker+controller) or a cluster of several
// such nodes, on the machine's JDK, from jars Maven resolves from Maven Central (deploy/kafka/pom.xml).
import { spawn, execFile } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../../../shared/logger.ts';
import { assertPortFree, exitOf, watchServerExit } from './servers.ts';
import type { ChildServer, Output } from './servers.ts';
import { ROOT, STACK_DIR, exists, waitForPort } from './stack.ts';
import type { Server } from './stack.ts';

const execFileP = promisify(execFile);

/**
 * Brokers still running when this process exits are killed: a teardown that gave up waiting (a cluster
 * node stopping without a quorum waits its full bound) would otherwise leave them running for hours.
 */
const runningBrokers = new Set<ChildProcess>();
let exitHook = false;
function killOnExit(child: ChildProcess): void {
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => runningBrokers.forEach((c) => c.kill('SIGKILL')));
  }
  runningBrokers.add(child);
  child.once('exit', () => runningBrokers.delete(child));
}

export interface KafkaServer extends ChildServer {
  brokers: string;
  port: number;
  /** SIGKILL, for broker-crash tests. */
  kill(): void;
  /** The node started again on its data (a cluster's node through its cluster, which then lists it). */
  restart(): Promise<KafkaServer>;
}

export interface KafkaOptions {
  dir: string;
  port: number;
  controllerPort: number;
  heapMb?: number;
  log: Logger;
  /** A node of a cluster (startKafkaCluster); absent: one standalone node, everything replicated once. */
  cluster?: ClusterMember;
  /** Each line of the node's own output (its log file, under a supervisor); always also at debug. */
  output?: Output;
  /** How restart() starts it again (a cluster's node: through its cluster); default: startKafka(these). */
  restart?: () => Promise<KafkaServer>;
}

/** What a node of a several-node KRaft cluster knows of the others (startKafkaCluster). */
export interface ClusterMember {
  nodeId: number;
  /** The cluster id every node is formatted with. */
  clusterId: string;
  /** Every node: each is a broker and a voter of the controller quorum. */
  nodes: { nodeId: number; port: number; controllerPort: number; directoryId: string }[];
}

/** Resolves the broker's jars once into .stack/kafka-libs (Maven, from Maven Central). */
export async function ensureKafkaLibs(log: Logger): Promise<string> {
  const libs = join(STACK_DIR, 'kafka-libs');
  const marker = join(libs, '.complete');
  if (await exists(marker)) return libs;
  log.info('resolving the Kafka broker jars from Maven Central (first run only)');
  await rm(libs, { recursive: true, force: true });
  await mkdir(libs, { recursive: true });
  try {
    await execFileP(
      'mvn',
      [
        '-q',
        '-B',
        '-f',
        join(ROOT, 'deploy/kafka/pom.xml'),
        'dependency:copy-dependencies',
        `-DoutputDirectory=${libs}`,
        '-DincludeScope=runtime',
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    );
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; code?: string };
    if (e.code === 'ENOENT')
      throw new Error('Maven (mvn) is not installed; it is needed to fetch the Kafka broker jars');
    throw new Error(`mvn dependency:copy-dependencies failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
  const jars = (await readdir(libs)).filter((f) => f.endsWith('.jar'));
  if (!jars.some((j) => j.startsWith('kafka_2.13-'))) throw new Error('Kafka jars missing after mvn');
  await writeFile(marker, jars.join('\n'));
  return libs;
}

/**
 * The broker settings that differ between one node and a cluster. One node: every internal topic
 * replicated once, or __consumer_offsets is never created. A cluster: three copies of everything, two of
 * which must have a write (acks=all) before it is acknowledged, so that one node may die at any moment.
 * The failure-detection settings are far below Kafka's defaults. With the defaults a killed broker is
 * fenced after 9 s (broker.session.timeout.ms), and until then it stays in the in-sync replicas of every
 * partition it holds, so every acks=all write to those partitions (with three copies on three nodes: to
 * all of them) waits, and callers get 503 once PRODUCE_TIMEOUT_MS (2 s) passes. Here a node is fenced
 * after 1 s without a heartbeat (every 200 ms), a follower that stopped fetching leaves the in-sync set
 * after 1.5 s even while the controller quorum elects a new leader (replica.lag.time.max.ms), and the
 * quorum notices its dead leader after 1 s (chaos --cluster; docs/scaling.md, "Three Kafka nodes on one
 * machine", has the measured moves). What keeps a live node from being taken for dead on a busy machine
 * is brokerPrecedence (the nodes run before the services on the cores); the first runs without it, at
 * load 40, saw live nodes fenced, partitions left with one in-sync replica and writes refused for tens of
 * seconds. The same section says what to choose for a real cluster.
 */
function replicationSettings(cluster: ClusterMember | undefined): string[] {
  if (!cluster) {
    return [
      'offsets.topic.replication.factor=1',
      'transaction.state.log.replication.factor=1',
      'transaction.state.log.min.isr=1',
      'share.coordinator.state.topic.replication.factor=1',
      'share.coordinator.state.topic.min.isr=1',
    ];
  }
  const { rf, minIsr } = clusterReplication(cluster.nodes.length);
  return [
    `default.replication.factor=${rf}`,
    `min.insync.replicas=${minIsr}`,
    `offsets.topic.replication.factor=${rf}`,
    `transaction.state.log.replication.factor=${rf}`,
    `transaction.state.log.min.isr=${minIsr}`,
    `share.coordinator.state.topic.replication.factor=${rf}`,
    `share.coordinator.state.topic.min.isr=${minIsr}`,
    'unclean.leader.election.enable=false',
    'broker.heartbeat.interval.ms=200',
    'broker.session.timeout.ms=1000',
    'replica.lag.time.max.ms=1500',
    'replica.fetch.wait.max.ms=100',
    'controller.quorum.fetch.timeout.ms=1000',
    'controller.quorum.election.timeout.ms=500',
    // Three JVMs share the machine with the services: fewer threads each.
    'num.network.threads=2',
    'num.io.threads=4',
  ];
}

export async function startKafka(opts: KafkaOptions): Promise<KafkaServer> {
  const c = opts.cluster;
  const node = c ? ` ${c.nodeId}` : '';
  await assertPortFree(opts.port, `kafka broker${node}`);
  await assertPortFree(opts.controllerPort, `kafka controller${node}`);
  const libs = await ensureKafkaLibs(opts.log);
  const dataDir = join(opts.dir, 'data');
  const tmpDir = join(opts.dir, 'tmp');
  await mkdir(dataDir, { recursive: true });
  await mkdir(tmpDir, { recursive: true });
  const props = join(opts.dir, 'server.properties');
  const quorum = c
    ? c.nodes.map((n) => `127.0.0.1:${n.controllerPort}`).join(',')
    : `127.0.0.1:${opts.controllerPort}`;
  await writeFile(
    props,
    [
      'process.roles=broker,controller',
      `node.id=${c?.nodeId ?? 1}`,
      `controller.quorum.bootstrap.servers=${quorum}`,
      `listeners=PLAINTEXT://127.0.0.1:${opts.port},CONTROLLER://127.0.0.1:${opts.controllerPort}`,
      // A cluster's controllers find each other by the endpoints they advertise.
      `advertised.listeners=PLAINTEXT://127.0.0.1:${opts.port}${c ? `,CONTROLLER://127.0.0.1:${opts.controllerPort}` : ''}`,
      'controller.listener.names=CONTROLLER',
      'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
      'inter.broker.listener.name=PLAINTEXT',
      `log.dirs=${dataDir}`,
      'num.partitions=1',
      'auto.create.topics.enable=false',
      'offsets.topic.num.partitions=8',
      ...replicationSettings(c),
      'group.initial.rebalance.delay.ms=0',
      'log.retention.hours=168',
      '',
    ].join('\n'),
  );
  const log4j = join(opts.dir, 'log4j2.properties');
  await writeFile(
    log4j,
    [
      'status=warn',
      'appender.console.type=Console',
      'appender.console.name=STDOUT',
      'appender.console.layout.type=PatternLayout',
      'appender.console.layout.pattern=[%d] %p %m (%c)%n',
      // KAFKA_LOG_LEVEL=INFO shows what the brokers decide (with LOG_LEVEL=debug, which prints their lines).
      'rootLogger.level=${env:KAFKA_LOG_LEVEL:-WARN}',
      'rootLogger.appenderRef.stdout.ref=STDOUT',
      '',
    ].join('\n'),
  );
  const heap = opts.heapMb ?? 512;
  const jvm = [
    `-Xmx${heap}m`,
    `-Xms${Math.min(heap, 256)}m`,
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    `-Djava.io.tmpdir=${tmpDir}`,
    `-Dlog4j2.configurationFile=${log4j}`,
    '-cp',
    join(libs, '*'),
  ];
  if (!(await exists(join(dataDir, 'meta.properties')))) {
    // A cluster: every node formatted with the same cluster id and the same initial voters, each voter
    // named by its node id, controller endpoint and the directory id of its metadata log.
    const format = c
      ? [
          '-t',
          c.clusterId,
          '--initial-controllers',
          c.nodes.map((n) => `${n.nodeId}@127.0.0.1:${n.controllerPort}:${n.directoryId}`).join(','),
        ]
      : ['--standalone', '-t', kafkaUuid()];
    await execFileP('java', [
      ...jvm,
      'kafka.tools.StorageTool',
      'format',
      '--ignore-formatted',
      ...format,
      '-c',
      props,
    ]);
  }
  const child = spawn('java', [...jvm, 'kafka.Kafka', props], { stdio: ['ignore', 'pipe', 'pipe'] });
  killOnExit(child);
  if (c) brokerPrecedence(child, opts.log);
  const lines = (buf: Buffer) =>
    buf
      .toString()
      .split('\n')
      .filter(Boolean)
      .forEach((l) => {
        opts.log.debug({ kafka: l, node: c?.nodeId }, 'kafka');
        opts.output?.(l);
      });
  child.stdout!.on('data', lines);
  child.stderr!.on('data', lines);
  let exited = false;
  const exitedP = new Promise<void>((res) => child.once('exit', () => ((exited = true), res())));
  // Three minutes: with every core busy (several test runs at once) a broker took more than one to listen.
  // A broker that never listened is killed, not left running without its caller.
  await Promise.race([
    // A restarted cluster node first catches up with the quorum's metadata: minutes on a busy machine.
    waitForPort(opts.port, c ? 300_000 : 180_000),
    exitedP.then(() => {
      throw new Error(
        `the Kafka broker${node} exited during start-up; run with LOG_LEVEL=debug to see its output`,
      );
    }),
  ]).catch((err: unknown) => {
    if (!exited) child.kill('SIGKILL');
    throw err;
  });
  opts.log.info({ port: opts.port, dir: opts.dir, ...(c ? { node: c.nodeId } : {}) }, 'kafka broker started');
  let stopped = false;
  watchServerExit(child, `kafka broker${node} (port ${opts.port})`, () => stopped);
  return {
    brokers: `127.0.0.1:${opts.port}`,
    port: opts.port,
    process: child,
    exited: exitOf(child),
    restart: () => (opts.restart ?? (() => startKafka(opts)))(),
    kill: () => {
      stopped = true;
      if (!exited) child.kill('SIGKILL');
    },
    stop: async () => {
      stopped = true;
      if (exited) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exitedP;
      clearTimeout(t);
    },
  };
}

/**
 * A cluster node runs before the services on this machine's cores (nice -5, when allowed): its heartbeats
 * and replica fetches are what the cluster's failure detection times (1 s, replicationSettings), and a
 * node starved of CPU by the load beside it would be taken for dead. On their own machines brokers need
 * no such thing. Without the privilege to raise a priority (not root) it stays as it is.
 */
function brokerPrecedence(child: ChildProcess, log: Logger): void {
  if (child.pid === undefined) return;
  try {
    setPriority(child.pid, -5);
  } catch (err) {
    log.debug({ err: (err as Error).message }, 'kafka node keeps the default CPU priority');
  }
}

/**
 * A Kafka Uuid as StorageTool random-uuid prints it (16 random bytes, base64url, no padding), without a
 * JVM start each: Kafka refuses ones whose text starts with "-" (they read as options).
 */
export function kafkaUuid(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

export interface KafkaCluster extends Server {
  /** host:port of every node, comma-separated (KAFKA_BROKERS). */
  brokers: string;
  /** The running node of each node id (index 0 is node 1); replaced by restart(). */
  nodes: KafkaServer[];
  /** The options each node was started with: a killed node restarts on its own data with them. */
  nodeOptions: KafkaOptions[];
  /** Starts node `nodeId` again (after a kill or a stop) on its data. */
  restart(nodeId: number): Promise<KafkaServer>;
  /** The node id of the active controller (the quorum's leader), as the nodes last recorded it; null if none. */
  activeController(): Promise<number | null>;
}

export interface KafkaClusterOptions {
  dir: string;
  /** One entry per node: its client port and its controller port. */
  ports: { port: number; controllerPort: number }[];
  heapMb?: number;
  log: Logger;
  /** Where node n's own output lines go (its log file, under a supervisor). */
  output?: (nodeId: number) => Output;
}

/**
 * Several KRaft nodes on this machine, each a broker and a controller (a quorum of as many voters), with
 * replication factor 3 and min.insync.replicas 2 for every topic (three nodes or more). The cluster id and
 * directory ids are kept in <dir>/cluster.json, so that a persistent cluster restarts on its own data.
 */
export async function startKafkaCluster(opts: KafkaClusterOptions): Promise<KafkaCluster> {
  await ensureKafkaLibs(opts.log);
  await mkdir(opts.dir, { recursive: true });
  const idsFile = join(opts.dir, 'cluster.json');
  type Ids = { clusterId: string; directoryIds: string[] };
  let ids: Ids | null = (await exists(idsFile)) ? (JSON.parse(await readFile(idsFile, 'utf8')) as Ids) : null;
  if (!ids || ids.directoryIds.length !== opts.ports.length) {
    ids = { clusterId: kafkaUuid(), directoryIds: opts.ports.map(() => kafkaUuid()) };
    await writeFile(idsFile, JSON.stringify(ids));
  }
  const nodes = opts.ports.map((p, i) => ({ nodeId: i + 1, ...p, directoryId: ids.directoryIds[i]! }));
  const nodeOptions: KafkaOptions[] = nodes.map((n) => ({
    dir: join(opts.dir, `node-${n.nodeId}`),
    port: n.port,
    controllerPort: n.controllerPort,
    heapMb: opts.heapMb ?? 384,
    log: opts.log,
    cluster: { nodeId: n.nodeId, clusterId: ids.clusterId, nodes },
    output: opts.output?.(n.nodeId),
    restart: () => cluster.restart(n.nodeId),
  }));
  // All at once: a node serves only once a majority of the quorum runs.
  const started = await Promise.allSettled(nodeOptions.map((o) => startKafka(o)));
  const failed = started.find((r) => r.status === 'rejected');
  if (failed) {
    await Promise.allSettled(started.map((r) => (r.status === 'fulfilled' ? r.value.stop() : null)));
    throw (failed as PromiseRejectedResult).reason;
  }
  const running = started.map((r) => (r as PromiseFulfilledResult<KafkaServer>).value);
  const cluster: KafkaCluster = {
    brokers: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
    nodes: running,
    nodeOptions,
    restart: async (nodeId) => {
      const node = await startKafka(nodeOptions[nodeId - 1]!);
      running[nodeId - 1] = node;
      return node;
    },
    stop: async () => {
      await Promise.allSettled(running.map((n) => n.stop()));
    },
    activeController: () => activeController(nodeOptions.map((o) => o.dir)),
  };
  return cluster;
}

/**
 * The node id of a cluster's active controller (the quorum's leader), from the nodes' data directories.
 * Kafka's Metadata answer names a random broker as "controller" under KRaft (clients never talk to the
 * quorum), and the admin client has no DescribeQuorum: each node records the quorum's leader and its epoch
 * in its metadata log's quorum-state file at every election; the highest epoch is the latest.
 */
export async function activeController(nodeDirs: string[]): Promise<number | null> {
  let best: { leaderId: number; leaderEpoch: number } | null = null;
  for (const dir of nodeDirs) {
    const file = join(dir, 'data', '__cluster_metadata-0', 'quorum-state');
    const state = await readFile(file, 'utf8')
      .then((t) => JSON.parse(t) as { leaderId: number; leaderEpoch: number })
      .catch(() => null);
    if (state && state.leaderId >= 0 && (!best || state.leaderEpoch > best.leaderEpoch)) best = state;
  }
  return best?.leaderId ?? null;
}

/** A cluster of `nodes` keeps three copies of everything (fewer nodes: one each), two of them in sync. */
export function clusterReplication(nodes: number): { rf: number; minIsr: number } {
  const rf = Math.min(3, nodes);
  return { rf, minIsr: Math.min(2, rf) };
}
