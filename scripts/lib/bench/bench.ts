// Pieces of the click benchmark (scripts/bench-clicks.ts): a bounded autocannon load runner that counts
// every answer itself, the bare-Fastify baseline server, per-process CPU accounting from /proc, and
// plain-text tables.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { join } from 'node:path';
import { ROOT } from '../stack/stack.ts';

// ---------------------------------------------------------------------------------------------------
// Load runner

/** What the load runner saw, summed over every run that shares the object. */
export class LoadCounters {
  /** Requests written to a socket. */
  sent = 0;
  /** Complete HTTP responses. */
  answered = 0;
  /** 200 with `"success": true`: a durable click. */
  accepted = 0;
  /** 2xx that is not a success (e.g. an inactive link). */
  otherTwoxx = 0;
  non2xx = 0;
  /** Connection errors and timeouts (the click may or may not have been taken). */
  errors = 0;
  timeouts = 0;
  readonly perLink = new Map<string, number>();
  readonly statusCodes = new Map<number, number>();

  /**
   * Requests whose outcome the client never learnt (errors, timeouts, abandoned when stopped), and those
   * answered 503: a produce not acknowledged in time may still be written (docs/operations.md, "A 503 does
   * not mean not recorded"), which a starved machine shows.
   */
  get unknown(): number {
    return Math.max(0, this.sent - this.answered) + (this.statusCodes.get(503) ?? 0);
  }
}

export interface BenchRequest {
  /** Short link the body points at, for per-link accounting. */
  link: string;
  body: string;
  headers?: Record<string, string>;
}

export interface RunLoadOptions {
  url: string;
  requests: BenchRequest[];
  connections: number;
  /** Total requests; the run ends when each has been answered or failed (no request is abandoned). */
  amount: number;
  /** Requests per second over all connections (autocannon overallRate); none = as fast as possible. */
  rate?: number;
  /** Split into this many autocannon instances started staggerMs apart, so rate-limited bursts interleave. */
  instances?: number;
  staggerMs?: number;
  /** Hard bound: stop (abandoning in-flight requests) after this long. */
  maxMs: number;
  counters: LoadCounters;
  /** Receives the click_id of every accepted click. */
  clickIds?: string[];
  /** Receives every response time (ms), e.g. to merge several runs. */
  latencies?: number[];
  signal?: AbortSignal;
}

export interface LoadRun {
  startedAt: number;
  endedAt: number;
  seconds: number;
  /** Stopped by maxMs or the signal rather than by running out of requests. */
  stoppedEarly: boolean;
  latencyMs: { p50: number; p99: number; max: number };
  answered: number;
  accepted: number;
  /** Answers per second over the second half of the run (warmer than the first): for sizing the next. */
  tailRate: number;
}

interface ClickAnswer {
  success?: unknown;
  click_id?: unknown;
}

let sends = 0; // "[<n>]" in a request's body becomes a new number at each send (e.g. a unique user agent)
function share(total: number, parts: number, i: number): number {
  return Math.floor(total / parts) + (i < total % parts ? 1 : 0);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

export function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export function latencySummary(values: number[]): { p50: number; p99: number; max: number } {
  const sorted = Float64Array.from(values).sort();
  return {
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: sorted.length ? sorted[sorted.length - 1]! : 0,
  };
}

/**
 * Drives `url` with autocannon (pipelining 1, keep-alive, POST JSON) for exactly `amount` requests, cycling
 * through `requests`, and counts every answer itself: autocannon's own `duration` mode destroys the
 * connections with requests in flight, which would leave clicks the server took but the client never saw.
 */
export async function runLoad(o: RunLoadOptions): Promise<LoadRun> {
  const c = o.counters;
  const acceptedBefore = c.accepted;
  const answeredBefore = c.answered;
  const parts = Math.max(1, Math.min(o.instances ?? 1, o.connections));
  const latencies: number[] = [];
  const instances: autocannon.Instance[] = [];
  let stoppedEarly = false;
  let lastEventAt = 0;
  let halfAt = 0;
  const half = Math.floor(o.amount / 2);
  let answeredHere = 0;
  const stopAll = () => {
    stoppedEarly = true;
    for (const inst of instances) inst.stop();
  };
  const timer = setTimeout(stopAll, o.maxMs);
  o.signal?.addEventListener('abort', stopAll, { once: true });

  const makeRequests = (): autocannon.Request[] =>
    o.requests.map(({ link, body, headers }) => ({
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
      ...(body.includes('[<n>]') && {
        setupRequest: (r) => ({ ...r, body: body.replaceAll('[<n>]', `${++sends}`) }),
      }),
      onResponse: (status: number, resBody: string) => {
        lastEventAt = Date.now();
        c.answered++;
        if (++answeredHere === half) halfAt = lastEventAt;
        c.statusCodes.set(status, (c.statusCodes.get(status) ?? 0) + 1);
        if (status < 200 || status > 299) {
          c.non2xx++;
          return;
        }
        let parsed: ClickAnswer | null;
        try {
          parsed = JSON.parse(resBody) as ClickAnswer | null;
        } catch {
          parsed = null;
        }
        if (status === 200 && parsed?.success === true) {
          c.accepted++;
          c.perLink.set(link, (c.perLink.get(link) ?? 0) + 1);
          if (o.clickIds && typeof parsed.click_id === 'string') o.clickIds.push(parsed.click_id);
        } else {
          c.otherTwoxx++;
        }
      },
    }));

  const startedAt = Date.now();
  const runs: Promise<void>[] = [];
  for (let i = 0; i < parts && !stoppedEarly; i++) {
    if (i > 0 && o.staggerMs) await sleep(o.staggerMs, o.signal);
    if (stoppedEarly) break;
    const rate = o.rate === undefined ? undefined : Math.max(1, share(o.rate, parts, i));
    // autocannon splits the rate over the connections; a connection given 0 would run unlimited.
    const connections = Math.min(share(o.connections, parts, i), rate ?? Infinity);
    const amount = Math.max(connections, share(o.amount, parts, i));
    runs.push(
      new Promise<void>((resolve, reject) => {
        const inst = autocannon(
          {
            url: o.url,
            method: 'POST',
            connections,
            pipelining: 1,
            amount,
            ...(rate === undefined ? {} : { overallRate: rate }),
            timeout: 10,
            // autocannon notices the end of the run only at its next sample tick (1 s by default); the
            // run's duration is taken from the last answer anyway.
            sampleInt: 100,
            requests: makeRequests(),
            setupClient: (client) => {
              // The Client emits 'request' for every request written (missing from @types/autocannon).
              (client as NodeJS.EventEmitter).on('request', () => c.sent++);
            },
          },
          (err) => (err ? reject(err as Error) : resolve()),
        );
        inst.on('response', (_client, _status, _bytes, ms) => {
          if (latencies.length < 4_000_000) latencies.push(ms);
          if (o.latencies && o.latencies.length < 4_000_000) o.latencies.push(ms);
        });
        inst.on('reqError', (err: unknown) => {
          lastEventAt = Date.now();
          c.errors++;
          if ((err as Error | null)?.message === 'request timed out') c.timeouts++;
        });
        instances.push(inst);
      }),
    );
  }
  try {
    await Promise.all(runs);
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', stopAll);
  }
  // Timed to the last answer: autocannon reports the end up to one sample interval late.
  const endedAt = lastEventAt > startedAt && !stoppedEarly ? lastEventAt : Date.now();
  return {
    startedAt,
    endedAt,
    seconds: (endedAt - startedAt) / 1000,
    stoppedEarly,
    latencyMs: latencySummary(latencies),
    answered: c.answered - answeredBefore,
    accepted: c.accepted - acceptedBefore,
    tailRate:
      halfAt > 0 && endedAt > halfAt
        ? (answeredHere - half) / ((endedAt - halfAt) / 1000)
        : answeredHere / Math.max(0.001, (endedAt - startedAt) / 1000),
  };
}

// ---------------------------------------------------------------------------------------------------
// Baseline: a bare Fastify process with one route answering what a successful click answers.

export const BASELINE_ANSWER = {
  success: true,
  click_id: 'cust_1_250203861799666688',
  partner_code: 'demo',
  cookie_window_days: 60,
};

const BASELINE_SOURCE = `
import Fastify from 'fastify';
const answer = ${JSON.stringify(BASELINE_ANSWER)};
const app = Fastify({ logger: false });
app.post('/api/v1/track/click', async () => answer);
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
process.stdout.write('baseline listening\\n');
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
`;

export interface BaselineServer {
  child: ChildProcess;
  /** Resolves once it listens; rejects if it exits first or takes longer than 30 s. */
  ready: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the baseline in its own Node process (resolving fastify from the repo) on 127.0.0.1:port. The
 * child exists as soon as this returns, so a caller can register its stop() before awaiting `ready`.
 */
export function startBaseline(port: number): BaselineServer {
  const child = spawn(process.execPath, ['--input-type=module', '-e', BASELINE_SOURCE], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  const ready = new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('baseline server did not start within 30 s')), 30_000);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('baseline listening')) {
        clearTimeout(t);
        resolve();
      }
    });
    void exited.then(() => {
      clearTimeout(t);
      reject(new Error('baseline server exited during start-up'));
    });
  });
  ready.catch(() => {});
  return {
    child,
    ready,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(t);
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// CPU accounting from /proc (Linux): per process tree, and the whole machine.

const CLK_TCK = 100;

interface ProcStat {
  ppid: number;
  /** utime + stime + cutime + cstime, in clock ticks. */
  ticks: number;
}

function readProc(pid: number): ProcStat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // f[0] = state (field 3), so field n is f[n - 3].
    return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) };
  } catch {
    return null;
  }
}

function ownTicks(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}

function machineTicks(): { busy: number; total: number } {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const v = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = v.reduce((a, b) => a + b, 0);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return { busy: 0, total: 0 };
  }
}

export interface CpuSnapshot {
  at: number;
  /** Ticks per named process (tree: the process and its descendants; "self": this process only). */
  byName: Map<string, number>;
  machine: { busy: number; total: number };
}

/**
 * Named roots: each is summed with its descendants, except `self` (this process only, since the
 * embedded Postgres and the Kafka broker are its children and have names of their own).
 */
/** CPU ticks so far of each named process tree (several pids under one name: their sum, e.g. replicas). */
export function cpuSnapshot(roots: Record<string, number | number[] | undefined>): CpuSnapshot {
  const procs = new Map<number, ProcStat>();
  const children = new Map<number, number[]>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    entries = [];
  }
  for (const e of entries) {
    const pid = Number(e);
    const st = readProc(pid);
    if (!st) continue;
    procs.set(pid, st);
    let list = children.get(st.ppid);
    if (!list) children.set(st.ppid, (list = []));
    list.push(pid);
  }
  const tree = (root: number): number => {
    let sum = 0;
    const stack = [root];
    const seen = new Set<number>();
    while (stack.length) {
      const pid = stack.pop()!;
      if (seen.has(pid)) continue;
      seen.add(pid);
      sum += procs.get(pid)?.ticks ?? 0;
      for (const ch of children.get(pid) ?? []) stack.push(ch);
    }
    return sum;
  };
  const byName = new Map<string, number>();
  for (const [name, pid] of Object.entries(roots)) {
    if (pid === undefined) continue;
    if (Array.isArray(pid))
      byName.set(
        name,
        pid.reduce((n, p) => n + tree(p), 0),
      );
    else byName.set(name, name === 'self' ? ownTicks(pid) : tree(pid));
  }
  return { at: Date.now(), byName, machine: machineTicks() };
}

export interface CpuUsage {
  seconds: number;
  /** Percent of one core, per name; "other" = the machine's busy time not in any named process. */
  percent: Map<string, number>;
  machineBusyPercent: number;
  cores: number;
}

export function cpuUsage(a: CpuSnapshot, b: CpuSnapshot, cores: number): CpuUsage {
  const seconds = Math.max(0.001, (b.at - a.at) / 1000);
  const percent = new Map<string, number>();
  let named = 0;
  for (const [name, ticks] of b.byName) {
    // A process started during the interval spent all its time in it.
    const d = Math.max(0, ticks - (a.byName.get(name) ?? 0));
    named += d;
    percent.set(name, (d / CLK_TCK / seconds) * 100);
  }
  const totalD = b.machine.total - a.machine.total;
  const busyD = b.machine.busy - a.machine.busy;
  const machineBusyPercent = totalD > 0 ? (busyD / totalD) * cores * 100 : 0;
  percent.set('other', Math.max(0, machineBusyPercent - (named / CLK_TCK / seconds) * 100));
  return { seconds, percent, machineBusyPercent, cores };
}

// ---------------------------------------------------------------------------------------------------
// Formatting

/**
 * CPU milliseconds per event of each named process over the given measured intervals (the process's CPU
 * time, not its share of a busy machine: a per-event cost that holds on a loaded machine too).
 */
export function cpuMsPerEvent(usages: CpuUsage[], events: number, names: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const n of names) {
    const ms = usages.reduce((sum, u) => sum + ((u.percent.get(n) ?? 0) / 100) * u.seconds * 1000, 0);
    out.set(n, events > 0 ? ms / events : 0);
  }
  return out;
}

/** "web 0.052, worker 0.061, … (total 0.180 ms)": a per-event CPU line. */
export function cpuLine(perEvent: Map<string, number>): string {
  const total = [...perEvent.values()].reduce((a, b) => a + b, 0);
  return `${[...perEvent].map(([n, v]) => `${n} ${v.toFixed(3)}`).join(', ')} (total ${total.toFixed(3)} ms)`;
}

/** The postmaster's pid of an embedded Postgres data directory (its CPU is the tree under it). */
export function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export function int(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function ms(n: number): string {
  return n >= 10_000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n).toLocaleString('en-US')} ms`;
}

/**
 * Left-aligned text columns; a row of one cell "-" is a rule. A row's last cell is never padded and does
 * not widen its column, so a long note can sit in a short row without pushing the other columns apart.
 */
export function table(rows: string[][], indent = '  '): string {
  const isRule = (r: string[]) => r.length === 1 && r[0] === '-';
  const widths: number[] = [];
  for (const r of rows) {
    if (isRule(r)) continue;
    r.forEach((cell, i) => {
      if (i < r.length - 1) widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  const cells = Math.max(...rows.map((r) => r.length));
  const last = Math.max(0, ...rows.filter((r) => r.length === cells).map((r) => r[r.length - 1]!.length));
  const rule = widths.slice(0, cells - 1).reduce((a, w) => a + w + 2, 0) + last;
  return rows
    .map((r) =>
      isRule(r)
        ? indent + '-'.repeat(rule)
        : indent +
          r
            .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
            .join('  ')
            .trimEnd(),
    )
    .join('\n');
}
