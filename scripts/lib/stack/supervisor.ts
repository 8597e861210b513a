// The supervisor of `npm start` (and `npm run stack`): every process it started, a server (Postgres, a Kafka
// node, MailDev) or a service (web, a worker), is started again after an exit nobody asked for, with the
// same configuration, data and port, after a back-off of 1 s, 2 s, 4 s … at most 30 s. One dead server is
// never a reason to stop the rest. It gives up only on a crash loop (a server whose starts keep failing:
// CRASH_LOOP.starts failed starts within CRASH_LOOP.windowMs) or when another process holds the server's
// port: then `onGiveUp` is called once, with one line naming the server, the reason and its log file.
// systemd's Restart=on-failure with StartLimitBurst/StartLimitIntervalSec is the model (docs/operations.md).
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import { createRegistry } from '../../../shared/http/ops.ts';
import type { Check } from '../../../shared/http/ops.ts';
import type { Logger } from '../../../shared/logger.ts';
import { PortInUseError } from './servers.ts';
import type { ChildServer, Exit, Output } from './servers.ts';

/** A started process as the supervisor holds it. */
export interface Running {
  pid: number | undefined;
  exited: Promise<Exit>;
  /** Stops it for good (the supervisor's own stop): its exit is then expected. */
  stop(): Promise<void>;
}

export type UnitKind = 'server' | 'service';

export interface UnitSpec {
  /** `postgres`, `kafka-2`, `maildev`, `web`, `click-worker#2`: a label value, so a bounded set. */
  name: string;
  kind: UnitKind;
  /** What the log lines call it: `kafka broker 2 (port 59094)`. */
  title: string;
  /** Its own log file, named when it gives up (servers). */
  logFile?: string;
  /**
   * Starts it; resolves once it answers (a server: listening / ready; a service: spawned) and rejects when
   * it does not come up (a PortInUseError when another process holds its port).
   */
  start(): Promise<Running>;
}

export type UnitState = 'starting' | 'up' | 'down' | 'stopped' | 'failed';

export interface UnitStatus {
  name: string;
  kind: UnitKind;
  state: UnitState;
  pid: number | null;
  /** Times it was started again after an exit. */
  restarts: number;
  /** Exits nobody asked for. */
  exits: number;
  last_exit: (Exit & { at: string }) | null;
  log_file: string | null;
}

export const BACKOFF = { firstMs: 1000, maxMs: 30_000 } as const;
/** A server whose starts failed this many times within the window is in a crash loop: everything stops. */
export const CRASH_LOOP = { starts: 5, windowMs: 5 * 60_000 } as const;
/** Up this long, a unit's back-off starts again from the first step. */
export const STABLE_MS = 60_000;
/** An exit this soon after coming up counts as a failed start (it never really ran). */
export const EARLY_EXIT_MS = 10_000;
/** Lines of each unit's own output kept for the exit's log line. */
const LAST_LINES = 20;

/** The back-off before attempt `n` (0-based) of a series of restarts: 1 s, 2 s, 4 s … at most 30 s. */
export function backoffMs(n: number, policy: { firstMs: number; maxMs: number } = BACKOFF): number {
  return Math.min(policy.maxMs, policy.firstMs * 2 ** Math.min(n, 30));
}

/** Why a unit was given up on, for the one line the start script ends with. */
export class GiveUp extends Error {
  readonly unit: string;
  constructor(unit: string, message: string) {
    super(message);
    this.name = 'GiveUp';
    this.unit = unit;
  }
}

interface Unit {
  spec: UnitSpec;
  state: UnitState;
  running: Running | null;
  upSince: number;
  restarts: number;
  exits: number;
  lastExit: (Exit & { at: string }) | null;
  /** Consecutive restarts since it last stayed up STABLE_MS: the back-off's step. */
  attempt: number;
  /** When starts failed (pruned to the crash-loop window). */
  failedStarts: number[];
  timer: NodeJS.Timeout | null;
}

export interface SupervisorOptions {
  log: Logger;
  /** Called once, when a server is given up on; the caller stops everything. */
  onGiveUp(err: GiveUp): void;
  backoff?: { firstMs: number; maxMs: number };
  crashLoop?: { starts: number; windowMs: number };
  stableMs?: number;
  earlyExitMs?: number;
}

const describeExit = (e: Exit) => (e.signal ? `signal ${e.signal}` : `code ${e.code}`);
const seconds = (ms: number) => `${ms % 1000 === 0 ? ms / 1000 : (ms / 1000).toFixed(1)} s`;

export class Supervisor {
  /** /metrics: restarts, exits and up per unit, beside the process metrics. */
  readonly registry: Registry = createRegistry('supervisor');
  /**
   * /readyz's checks, one per unit as it is added: `ok` while it is up, else its state (`down`, `starting`,
   * `failed`), so the answer is 503 `not ready: kafka-2` while that node is down.
   */
  readonly checks: Record<string, Check> = {};
  private readonly units = new Map<string, Unit>();
  private readonly lines = new Map<string, string[]>();
  private readonly opts: Required<Omit<SupervisorOptions, 'log' | 'onGiveUp'>> & SupervisorOptions;
  private stopping = false;
  private gaveUp = false;
  private readonly restartsTotal: Counter<'unit' | 'kind'>;
  private readonly exitsTotal: Counter<'unit' | 'kind'>;

  constructor(opts: SupervisorOptions) {
    this.opts = {
      backoff: BACKOFF,
      crashLoop: CRASH_LOOP,
      stableMs: STABLE_MS,
      earlyExitMs: EARLY_EXIT_MS,
      ...opts,
    };
    this.restartsTotal = new Counter({
      name: 'svc_supervisor_restarts_total',
      help: 'Processes started again by the supervisor after an exit nobody asked for',
      labelNames: ['unit', 'kind'],
      registers: [this.registry],
    });
    this.exitsTotal = new Counter({
      name: 'svc_supervisor_exits_total',
      help: 'Exits nobody asked for, per process',
      labelNames: ['unit', 'kind'],
      registers: [this.registry],
    });
    const units = this.units;
    new Gauge({
      name: 'svc_supervisor_up',
      help: '1 while the process runs (a server: answers), 0 while it is down or starting again',
      labelNames: ['unit', 'kind'],
      registers: [this.registry],
      collect() {
        for (const u of units.values())
          this.set({ unit: u.spec.name, kind: u.spec.kind }, u.state === 'up' ? 1 : 0);
      },
    });
  }

  /**
   * Takes over a unit: `running` is its process started already (start-up did that, in its own order), or
   * absent to start it now. Resolves once it runs.
   */
  async add(spec: UnitSpec, running?: Running): Promise<void> {
    if (this.units.has(spec.name)) throw new Error(`${spec.name} is supervised already`);
    const unit: Unit = {
      spec,
      state: 'starting',
      running: null,
      upSince: Date.now(),
      restarts: 0,
      exits: 0,
      lastExit: null,
      attempt: 0,
      failedStarts: [],
      timer: null,
    };
    this.units.set(spec.name, unit);
    this.checks[spec.name] = () => Promise.resolve(unit.state === 'up' ? 'ok' : unit.state);
    for (const kind of [this.restartsTotal, this.exitsTotal])
      kind.inc({ unit: spec.name, kind: spec.kind }, 0);
    this.watch(unit, running ?? (await spec.start()));
  }

  /** One line of a unit's own output (from before it was added, too): kept for its exit's log line. */
  output(name: string, line: string): void {
    let lines = this.lines.get(name);
    if (!lines) this.lines.set(name, (lines = []));
    lines.push(line.length > 300 ? `${line.slice(0, 300)}…` : line);
    if (lines.length > LAST_LINES) lines.shift();
  }

  /** The unit's last lines since it last exited, and forgets them (the next process starts afresh). */
  private lastLines(name: string): string[] {
    const lines = this.lines.get(name) ?? [];
    this.lines.delete(name);
    return lines.slice(-8);
  }

  /** The current process of a unit (for its stop, and for tests and chaos). */
  current(name: string): Running | null {
    return this.units.get(name)?.running ?? null;
  }

  status(): UnitStatus[] {
    return [...this.units.values()].map((u) => ({
      name: u.spec.name,
      kind: u.spec.kind,
      state: u.state,
      pid: u.state === 'up' ? (u.running?.pid ?? null) : null,
      restarts: u.restarts,
      exits: u.exits,
      last_exit: u.lastExit,
      log_file: u.spec.logFile ?? null,
    }));
  }

  /**
   * Stops the units of `kind` (every unit without it) for good: pending restarts cancelled, each process
   * asked to stop; a failed stop is logged, not thrown (it may be mid-crash).
   */
  async stop(kind?: UnitKind): Promise<void> {
    if (!kind) this.stopping = true;
    const chosen = [...this.units.values()].filter((u) => !kind || u.spec.kind === kind);
    for (const u of chosen) {
      u.state = 'stopped';
      if (u.timer) clearTimeout(u.timer);
      u.timer = null;
    }
    const results = await Promise.allSettled(chosen.map((u) => u.running?.stop()));
    for (const [i, r] of results.entries())
      if (r.status === 'rejected')
        this.opts.log.warn({ unit: chosen[i]!.spec.name, err: r.reason }, 'did not stop cleanly');
  }

  /** Holds `running` as the unit's process from now on; false (and stops it) after a stop. */
  private watch(unit: Unit, running: Running): boolean {
    if (this.over(unit)) {
      // A start that completed after the stop: not left running.
      void running.stop().catch(() => {});
      return false;
    }
    unit.running = running;
    unit.state = 'up';
    unit.upSince = Date.now();
    void running.exited.then((exit) => {
      if (unit.running !== running || this.over(unit)) return;
      this.exited(unit, exit);
    });
    return true;
  }

  private exited(unit: Unit, exit: Exit): void {
    const { spec } = unit;
    const now = Date.now();
    const upFor = now - unit.upSince;
    unit.state = 'down';
    unit.exits += 1;
    unit.lastExit = { ...exit, at: new Date(now).toISOString() };
    this.exitsTotal.inc({ unit: spec.name, kind: spec.kind });
    if (upFor >= this.opts.stableMs) unit.attempt = 0;
    if (upFor < this.opts.earlyExitMs) unit.failedStarts.push(now);
    const last_lines = this.lastLines(spec.name);
    if (this.crashLoop(unit, `it exited (${describeExit(exit)}) within ${seconds(upFor)} of starting`))
      return;
    const delay = backoffMs(unit.attempt++, this.opts.backoff);
    this.opts.log.error(
      { [spec.kind]: spec.name, exited_pid: unit.running?.pid, ...exit, last_lines, ...this.logFile(unit) },
      `${spec.title} exited (${describeExit(exit)}); starting it again in ${seconds(delay)}`,
    );
    this.schedule(unit, delay);
  }

  private schedule(unit: Unit, delay: number): void {
    unit.timer = setTimeout(() => {
      unit.timer = null;
      void this.restart(unit);
    }, delay);
  }

  /** Stopped for good (the unit, or everything): no restart. A method, read after every await. */
  private over(unit: Unit): boolean {
    return unit.state === 'stopped' || this.stopping;
  }

  private async restart(unit: Unit): Promise<void> {
    if (this.over(unit)) return;
    const { spec } = unit;
    unit.state = 'starting';
    let running: Running;
    try {
      running = await spec.start();
    } catch (err) {
      if (this.over(unit)) return;
      unit.state = 'down';
      const reason = (err instanceof Error ? err.message : String(err)).replace(/\.$/, '');
      if (err instanceof PortInUseError) {
        this.giveUp(unit, `it cannot start again: ${reason}`);
        return;
      }
      unit.failedStarts.push(Date.now());
      if (this.crashLoop(unit, `its last start failed: ${reason}`)) return;
      const delay = backoffMs(unit.attempt++, this.opts.backoff);
      this.opts.log.error(
        { [spec.kind]: spec.name, err: reason, last_lines: this.lastLines(spec.name), ...this.logFile(unit) },
        `${spec.title} did not start; trying again in ${seconds(delay)}`,
      );
      this.schedule(unit, delay);
      return;
    }
    unit.restarts += 1;
    this.restartsTotal.inc({ unit: spec.name, kind: spec.kind });
    if (!this.watch(unit, running)) return;
    this.opts.log.info(
      { [spec.kind]: spec.name, new_pid: running.pid, restarts: unit.restarts },
      spec.kind === 'server' ? `${spec.title} is back and answers` : `${spec.title} started again`,
    );
  }

  /** Gives up on a server whose failed starts reached the crash-loop bound; true when it did. */
  private crashLoop(unit: Unit, last: string): boolean {
    const { starts, windowMs } = this.opts.crashLoop;
    const since = Date.now() - windowMs;
    unit.failedStarts = unit.failedStarts.filter((t) => t >= since);
    if (unit.spec.kind !== 'server' || unit.failedStarts.length < starts) return false;
    this.giveUp(
      unit,
      `${unit.failedStarts.length} starts failed within ${seconds(windowMs)} (crash loop); ${last}`,
    );
    return true;
  }

  private giveUp(unit: Unit, reason: string): void {
    unit.state = 'failed';
    if (this.gaveUp) return;
    this.gaveUp = true;
    const where = unit.spec.logFile ? `; its log: ${unit.spec.logFile}` : '';
    this.opts.onGiveUp(
      new GiveUp(unit.spec.name, `${unit.spec.title} is down and stays down: ${reason}${where}`),
    );
  }

  private logFile(unit: Unit): { log_file?: string } {
    return unit.spec.logFile ? { log_file: unit.spec.logFile } : {};
  }
}

/**
 * A server (Postgres, a Kafka node, MailDev) as a unit: `first` is running already; each restart is the
 * previous process's restart() (same configuration, data directory and port).
 */
export function serverUnit(
  name: string,
  title: string,
  first: ChildServer,
  logFile?: string,
): { spec: UnitSpec; running: Running } {
  let current = first;
  const running = (s: ChildServer): Running => ({
    pid: s.process.pid,
    exited: s.exited,
    stop: () => s.stop(),
  });
  return {
    spec: {
      name,
      kind: 'server',
      title,
      logFile,
      start: async () => {
        current = await current.restart();
        return running(current);
      },
    },
    running: running(first),
  };
}

/**
 * Each server's own log file, `<dir>/<unit>.log` (appended, a timestamp per line), and the supervisor's
 * last lines of it: the `output` of the server's start options.
 */
export function serverLogs(
  dir: string,
  supervisor: Supervisor,
): { file(unit: string): string; output(unit: string): Output } {
  const file = (unit: string) => join(dir, `${unit}.log`);
  return {
    file,
    output: (unit) => {
      mkdirSync(dir, { recursive: true });
      const stream = createWriteStream(file(unit), { flags: 'a' });
      stream.on('error', () => {}); // a full disk must not take the server's supervision down with it
      return (line) => {
        stream.write(`${new Date().toISOString()} ${line}\n`);
        supervisor.output(unit, line);
      };
    },
  };
}
