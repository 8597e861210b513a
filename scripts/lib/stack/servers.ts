// The servers `npm start`, `npm run stack` and `npm test` start (Postgres, Kafka nodes, MailDev, the
// services): each port checked free before its server starts, naming the port and, where this machine lets
// us read it, the process listening on it; and a server that exits after start-up reported (npm test stops
// rather than run on without it; npm start's supervisor, supervisor.ts, starts it again). Without both, a
// Kafka node that could not bind (one of an earlier run still shutting down held its port) exited unseen
// while the old one answered in its place, and then the stack ran with no Kafka at all.
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { readdir, readFile, readlink } from 'node:fs/promises';

/** True when nothing listens on `host:port` (we could bind it). */
export function portFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

export interface PortHolder {
  pid: number;
  /** Its command line, shortened. */
  command: string;
}

/** The inodes of the sockets listening on `port` (Linux /proc/net/tcp and tcp6). */
async function listeningInodes(port: number): Promise<Set<string>> {
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(file, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is "<hex ip>:<hex port>", st 0A is LISTEN, the inode is the tenth column.
      const local = cols[1];
      if (!local || cols[3] !== '0A') continue;
      if (parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port && cols[9]) inodes.add(cols[9]);
    }
  }
  return inodes;
}

/**
 * The process listening on `port`, read from /proc (Linux; processes of other users only as root), or
 * null when it cannot be told.
 */
export async function portHolder(port: number): Promise<PortHolder | null> {
  const inodes = await listeningInodes(port);
  if (inodes.size === 0) return null;
  const pids = await readdir('/proc').catch(() => [] as string[]);
  for (const pid of pids) {
    if (!/^\d+$/.test(pid)) continue;
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const m = /^socket:\[(\d+)\]$/.exec(target);
      if (m && inodes.has(m[1]!)) {
        const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
        const command = cmdline.split('\0').filter(Boolean).join(' ');
        return { pid: Number(pid), command: command.length > 160 ? `${command.slice(0, 157)}...` : command };
      }
    }
  }
  return null;
}

export class PortInUseError extends Error {
  readonly port: number;
  readonly what: string;
  readonly holder: PortHolder | null;
  constructor(port: number, what: string, holder: PortHolder | null) {
    super(
      `port ${port} (${what}) is already in use` +
        (holder
          ? ` by process ${holder.pid}: ${holder.command || '(no command line)'}`
          : ' by another process (not readable here; `ss -ltnp` names it)') +
        '. Stop that process or choose another port.',
    );
    this.name = 'PortInUseError';
    this.port = port;
    this.what = what;
    this.holder = holder;
  }
}

/** Throws PortInUseError, naming the holder where it can, unless `port` is free. */
export async function assertPortFree(port: number, what: string, host = '127.0.0.1'): Promise<void> {
  if (await portFree(port, host)) return;
  throw new PortInUseError(port, what, await portHolder(port));
}

/** How a process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The promise of a child process's end (already settled when it has ended). */
export function exitOf(child: ChildProcess): Promise<Exit> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** Where a server's own output lines go besides the debug log (its log file, under the supervisor). */
export type Output = (line: string) => void;

/** A server run as a child process (Postgres, a Kafka node, MailDev). */
export interface ChildServer {
  process: ChildProcess;
  exited: Promise<Exit>;
  stop(): Promise<void>;
  /** The same server started again: same configuration, data directory and port. */
  restart(): Promise<ChildServer>;
}

export type ServerExitListener = (server: string, code: number | null, signal: NodeJS.Signals | null) => void;
const exitListeners = new Set<ServerExitListener>();

/**
 * Calls `listener` when a server this process started (Postgres, a Kafka node, MailDev) exits after its
 * start-up without its own stop() or kill() having been called. Returns the function that removes it.
 */
export function onServerExit(listener: ServerExitListener): () => void {
  exitListeners.add(listener);
  return () => exitListeners.delete(listener);
}

/**
 * Watches a started server's process: its exit is reported to the onServerExit listeners unless
 * `expected()` says the caller stopped or killed it.
 */
export function watchServerExit(child: ChildProcess, server: string, expected: () => boolean): void {
  const report = (code: number | null, signal: NodeJS.Signals | null) => {
    if (!expected()) for (const l of exitListeners) l(server, code, signal);
  };
  if (child.exitCode !== null || child.signalCode !== null) report(child.exitCode, child.signalCode);
  else child.once('exit', report);
}

/**
 * For a command whose servers failed to start (a port in use, a broker that exited): the reason as one
 * error line, no stack trace for a known cause, and exit 1.
 */
export function startFailed(log: { error: (obj: object, msg: string) => void }, err: unknown): never {
  const known = err instanceof PortInUseError;
  log.error(known ? {} : { err }, known ? err.message : `the stack did not start: ${(err as Error).message}`);
  process.exit(1);
}
