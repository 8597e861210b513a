// `npm run chaos -- --supervised`: the fault suite through the real entry point. `npm start`'s own script
// (scripts/start.ts) starts Postgres, Kafka (one node, or three with --cluster), MailDev and every service
// on a throwaway data directory and supervises them; the faults kill its processes (kill -9 of a service, a
// Kafka node, the Postgres postmaster, MailDev; SIGTERM of a service) and the harness restarts nothing: a
// fault is over when the supervisor has brought its process back. The harness learns the processes and
// their state from the supervisor's /status and their exits from its log lines (--json-logs).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, freePort, freePortRange, waitForPort } from '../stack/stack.ts';
import { SERVICES, opsLayout } from '../stack/services.ts';
import type { ServiceName } from '../stack/services.ts';
import { activeController } from '../stack/kafka-server.ts';
import type { Exit } from '../stack/servers.ts';
import type { UnitStatus } from '../stack/supervisor.ts';
import type { Brokers, Fault } from './cluster.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface SupervisedOptions {
  /** The throwaway data directory (Postgres, Kafka, MailDev's mail, the servers' logs). */
  dir: string;
  /** Three Kafka nodes instead of one. */
  cluster: boolean;
  replicas: number;
  /** More environment for the start script and its services (KAFKA_PREFIX, LOG_LEVEL, ...). */
  env: Record<string, string>;
  /** Every line the start script and its services print. */
  onLine(line: string): void;
  /** An exit the harness did not cause: the process, its code and its last lines (from the supervisor). */
  onUnexpectedExit(unit: string, code: number | null, lastLines: string[]): void;
  /** Longest wait for the whole start (Kafka, Postgres, migrations, every service ready). */
  startMs?: number;
}

interface ExitLine extends Exit {
  unit: string;
  pid: number;
  lastLines: string[];
}

/** The start script's processes, as the harness sees and hits them. */
export class SupervisedStack {
  readonly baseUrl: string;
  readonly databaseUrl: string;
  readonly brokers: string;
  private readonly exits = new Map<number, ExitLine>();
  private readonly exitWaiters = new Map<number, (e: ExitLine) => void>();
  /** Pids the harness hit: their exits are expected. */
  private readonly expected = new Set<number>();
  private ended: Exit | null = null;
  private readonly opts: SupervisedOptions;
  private readonly child: ChildProcess;
  private readonly ports: { web: number; pg: number; kafka: number; ops: number };

  private constructor(
    opts: SupervisedOptions,
    child: ChildProcess,
    ports: { web: number; pg: number; kafka: number; ops: number },
  ) {
    this.opts = opts;
    this.child = child;
    this.ports = ports;
    this.baseUrl = `http://127.0.0.1:${ports.web}`;
    this.databaseUrl = `postgres://postgres:postgres@127.0.0.1:${ports.pg}/svc`;
    this.brokers = Array.from(
      { length: opts.cluster ? 3 : 1 },
      (_, i) => `127.0.0.1:${ports.kafka + 2 * i}`,
    ).join(',');
  }

  /** Runs the start script and waits until every process it supervises is up and every service ready. */
  static async start(opts: SupervisedOptions): Promise<SupervisedStack> {
    const ports = {
      web: await freePort(),
      pg: await freePort(),
      kafka: await freePortRange(opts.cluster ? 6 : 2),
      ops: await freePortRange(SERVICES.length * opts.replicas + 1),
    };
    const args = [
      join(ROOT, 'scripts/start.ts'),
      ...['--data-dir', opts.dir, '--port', String(ports.web)],
      ...['--pg-port', String(ports.pg), '--kafka-port', String(ports.kafka)],
      ...['--mail-smtp-port', String(await freePort()), '--mail-web-port', String(await freePort())],
      ...['--no-demo', '--json-logs'],
      ...(opts.cluster ? ['--brokers', '3'] : []),
      ...(opts.replicas > 1 ? ['--replicas', String(opts.replicas)] : []),
    ];
    // The embedded servers, whatever this shell points at: no DATABASE_URL, KAFKA_BROKERS or SMTP_URL.
    const env: Record<string, string | undefined> = {
      ...process.env,
      ...opts.env,
      OPS_PORT: String(ports.ops),
    };
    for (const k of ['DATABASE_URL', 'KAFKA_BROKERS', 'SMTP_URL']) delete env[k];
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const stack = new SupervisedStack(opts, child, ports);
    for (const stream of [child.stdout!, child.stderr!]) {
      let buf = '';
      stream.on('data', (d: Buffer) => {
        buf += d.toString();
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
          stack.line(buf.slice(0, i));
          buf = buf.slice(i + 1);
        }
      });
    }
    child.once('exit', (code, signal) => (stack.ended = { code, signal }));
    await stack.ready(opts.startMs ?? 360_000);
    return stack;
  }

  /** One line of the start script's output: its exit lines name the process, its pid and last lines. */
  private line(line: string): void {
    this.opts.onLine(line);
    if (!line.startsWith('{') || !line.includes('"exited_pid"')) return;
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    if (typeof o.exited_pid !== 'number') return;
    const exit: ExitLine = {
      unit: String(o.server ?? o.service),
      pid: o.exited_pid,
      code: (o.code as number | null) ?? null,
      signal: (o.signal as NodeJS.Signals | null) ?? null,
      lastLines: Array.isArray(o.last_lines) ? o.last_lines.map(String) : [],
    };
    this.exits.set(exit.pid, exit);
    this.exitWaiters.get(exit.pid)?.(exit);
    if (!this.expected.has(exit.pid)) this.opts.onUnexpectedExit(exit.unit, exit.code, exit.lastLines);
  }

  /** The supervisor's operations endpoints (/healthz, /readyz, /metrics, /status). */
  get supervisorUrl(): string {
    return `http://127.0.0.1:${this.opsPorts().supervisor}`;
  }

  /** The supervisor's view: its own pid, and every process, its state and pid. */
  async supervisor(): Promise<{ pid: number; units: UnitStatus[] }> {
    const r = await fetch(`${this.supervisorUrl}/status`, { signal: AbortSignal.timeout(5000) });
    return (await r.json()) as { pid: number; units: UnitStatus[] };
  }

  async status(): Promise<UnitStatus[]> {
    return (await this.supervisor()).units;
  }

  /** The start script's own exit, once it has ended. */
  exited(): Promise<Exit> {
    if (this.ended) return Promise.resolve(this.ended);
    return new Promise((r) => this.child.once('exit', (code, signal) => r({ code, signal })));
  }

  async pidOf(unit: string): Promise<number> {
    const u = (await this.status()).find((s) => s.name === unit);
    if (!u?.pid) throw new Error(`${unit} is not running (${u?.state ?? 'unknown'})`);
    return u.pid;
  }

  /** Sends `signal` to the unit's process (its exit is expected); resolves with how it exited. */
  async hit(unit: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<ExitLine> {
    const pid = await this.pidOf(unit);
    this.expected.add(pid);
    const exited = this.exitOf(pid, 60_000);
    process.kill(pid, signal);
    return exited;
  }

  /** Until the supervisor has logged the exit of `pid`, bounded. */
  exitOf(pid: number, boundMs: number): Promise<ExitLine> {
    const seen = this.exits.get(pid);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const t = setTimeout(
        () => reject(new Error(`no exit of pid ${pid} logged within ${boundMs} ms`)),
        boundMs,
      );
      this.exitWaiters.set(pid, (e) => {
        clearTimeout(t);
        this.exitWaiters.delete(pid);
        resolve(e);
      });
    });
  }

  /**
   * Until the supervisor has `unit` up again in a process other than `oldPid` (a service: and its /readyz
   * answers 200); the moment it was seen back. Nothing here starts it: the supervisor must.
   */
  async back(unit: string, oldPid: number, boundMs = 300_000): Promise<number> {
    const deadline = Date.now() + boundMs;
    const ops = this.opsPorts();
    const service = SERVICES.find((s) => unit === s || unit.startsWith(`${s}#`));
    for (;;) {
      if (this.ended) throw new Error(`the start script exited (${JSON.stringify(this.ended)})`);
      const u = await this.status()
        .then((all) => all.find((s) => s.name === unit))
        .catch(() => undefined);
      if (u?.state === 'failed') throw new Error(`the supervisor gave up on ${unit}`);
      if (u?.state === 'up' && u.pid !== null && u.pid !== oldPid) {
        if (!service) return Date.now();
        const replica = unit.includes('#') ? Number(unit.split('#')[1]) : 1;
        const ready = await fetch(`http://127.0.0.1:${ops.port(service, replica)}/readyz`, {
          signal: AbortSignal.timeout(2000),
        })
          .then((r) => r.status === 200)
          .catch(() => false);
        if (ready) return Date.now();
      }
      if (Date.now() > deadline) throw new Error(`${unit} not back within ${boundMs} ms`);
      await sleep(100);
    }
  }

  /** The nodes of the cluster (--cluster) as the cluster faults act on them: the supervisor restarts them. */
  brokerNodes(): Brokers {
    const killed = new Map<number, number>();
    const hit = async (node: number, signal: NodeJS.Signals) => {
      killed.set(node, (await this.hit(`kafka-${node}`, signal)).pid);
    };
    return {
      count: 3,
      kill: (node) => hit(node, 'SIGKILL'),
      stop: (node) => hit(node, 'SIGTERM'),
      start: async (node) => {
        await this.back(`kafka-${node}`, killed.get(node) ?? -1);
      },
      activeController: () =>
        activeController([1, 2, 3].map((n) => join(this.opts.dir, 'kafka-3', `node-${n}`))),
    };
  }

  /** Stops the start script (SIGTERM: its own ordered stop); its exit code, or null when it had to be killed. */
  async stop(): Promise<number | null> {
    if (this.ended) return this.ended.code;
    const exited = new Promise<Exit>((r) => this.child.once('exit', (code, signal) => r({ code, signal })));
    this.child.kill('SIGTERM');
    const t = setTimeout(() => this.child.kill('SIGKILL'), 120_000);
    const e = await exited;
    clearTimeout(t);
    return e.signal ? null : e.code;
  }

  private opsPorts() {
    return opsLayout(this.ports.ops, this.opts.replicas);
  }

  /** Until every process is up and every service's /readyz answers 200 (they reach Postgres and Kafka). */
  async ready(boundMs: number): Promise<void> {
    const deadline = Date.now() + boundMs;
    const ops = this.opsPorts();
    for (;;) {
      if (this.ended)
        throw new Error(`the start script exited during start-up (${JSON.stringify(this.ended)})`);
      const units = await this.status().catch(() => null);
      const serviceIds = units?.filter((u) => u.kind === 'service') ?? [];
      if (
        units &&
        units.every((u) => u.state === 'up') &&
        serviceIds.length === SERVICES.length * this.opts.replicas
      ) {
        const ready = await Promise.all(
          serviceIds.map((u) => {
            const [name, replica] = u.name.split('#') as [ServiceName, string | undefined];
            return fetch(`http://127.0.0.1:${ops.port(name, Number(replica ?? 1))}/readyz`, {
              signal: AbortSignal.timeout(2000),
            })
              .then((r) => r.status === 200)
              .catch(() => false);
          }),
        );
        if (ready.every(Boolean)) {
          await waitForPort(this.ports.web, 10_000);
          return;
        }
      }
      if (Date.now() > deadline)
        throw new Error(`the start script's processes not all ready within ${boundMs} ms`);
      await sleep(250);
    }
  }
}

/**
 * The faults of --supervised (one Kafka node): kill -9 of each service, of the broker, of the Postgres
 * postmaster and of MailDev, and SIGTERM of each service; each over once the supervisor brought it back.
 * `termCodes` collects SIGTERM exits other than 0.
 */
export function supervisedFaults(s: SupervisedStack, instances: string[], termCodes: string[]): Fault[] {
  const short = (id: string) => id.replace(/-worker(#\d+)?$/, '$1').replace(/#1$/, '');
  const killOf = (unit: string, what: string, name: string): Fault => ({
    name,
    what,
    run: async () => {
      const { pid } = await s.hit(unit);
      return s.back(unit, pid);
    },
  });
  const first = instances.filter((id) => !id.includes('#') || id.endsWith('#1'));
  return [
    ...first.map((id) => killOf(id, `kill -9 ${id}, started again by the supervisor`, `kill-${short(id)}`)),
    killOf('kafka', 'Kafka broker kill -9, started again by the supervisor', 'broker-kill'),
    killOf('postgres', 'Postgres postmaster kill -9, started again by the supervisor', 'pg-kill'),
    killOf('maildev', 'MailDev kill -9, started again by the supervisor', 'maildev-kill'),
    ...first.map((id): Fault => ({
      name: `term-${short(id)}`,
      what: `SIGTERM ${id} (graceful), started again by the supervisor`,
      run: async () => {
        const exit = await s.hit(id, 'SIGTERM');
        if (exit.code !== 0) termCodes.push(`${id} exited ${exit.code ?? exit.signal}`);
        return s.back(id, exit.pid);
      },
    })),
  ];
}

/** The short run of --supervised: the harness's short set, with the postmaster killed instead of stopped. */
export const SHORT_SUPERVISED_FAULTS = [
  'kill-click',
  'kill-web',
  'broker-kill',
  'pg-kill',
  'term-attribution',
];
/** With --cluster: a leader node killed, the postmaster killed, one process of every kind killed. */
export const SHORT_SUPERVISED_CLUSTER_FAULTS = ['leader-kill', 'pg-kill', 'kill-replicas'];
