// What bench:clicks prints while it runs: a progress line every few seconds, and the services' output. The
// web runs at LOG_LEVEL=warn and everything it says is shown; the worker runs at info for its status lines,
// and only its warnings and errors are shown in full.
import { int, ms } from './bench.ts';
import type { LoadCounters } from './bench.ts';
import { lineWatcher } from '../stack/services.ts';

const STATUS_EVERY_MS = 3000;
const MAX_SHOWN = 40;

export interface WorkerStatus {
  at: number;
  perSecond: number;
  lagP50Ms: number;
  lagP99Ms: number;
  messages: number;
}

export class ClickBenchOutput {
  readonly startedAt = Date.now();
  readonly progress = {
    phase: 'starting',
    phaseStart: Date.now(),
    counters: null as LoadCounters | null,
    persisted: 0,
    kafkaLag: null as number | null,
    workerP99: null as number | null,
  };
  /** The click worker's own status lines (every 10 s). */
  readonly workerStatus: WorkerStatus[] = [];
  readonly workerRetries = { total: 0, deadlocks: 0 };
  /** Waits for a line of the click worker's output. */
  readonly workerWatcher = lineWatcher();
  private readonly shown = { web: 0, worker: 0 };
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.timer = setInterval(() => this.printProgress(), STATUS_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  setPhase(phase: string, counters: LoadCounters | null): void {
    this.progress.phase = phase;
    this.progress.phaseStart = Date.now();
    this.progress.counters = counters;
    this.printProgress();
  }

  private printProgress(): void {
    const { progress } = this;
    const c = progress.counters;
    const parts = [
      `[bench ${((Date.now() - this.startedAt) / 1000).toFixed(0).padStart(4)}s]`,
      `${progress.phase} +${((Date.now() - progress.phaseStart) / 1000).toFixed(1)}s`,
    ];
    if (c) {
      parts.push(
        `sent ${int(c.sent)}  accepted ${int(c.accepted)}  non-2xx ${int(c.non2xx)}  errors ${int(c.errors)}`,
      );
    }
    parts.push(`persisted ${int(progress.persisted)}`);
    if (progress.kafkaLag !== null) parts.push(`kafka backlog ${int(progress.kafkaLag)}`);
    if (progress.workerP99 !== null) parts.push(`worker lag p99 ${ms(progress.workerP99)}`);
    process.stderr.write(parts.join(' | ') + '\n');
  }

  private showLine(who: 'web' | 'worker', line: string): void {
    if (this.shown[who] < MAX_SHOWN) process.stderr.write(`[${who}] ${line}\n`);
    else if (this.shown[who] === MAX_SHOWN) process.stderr.write(`[${who}] (further output suppressed)\n`);
    this.shown[who]++;
  }

  /** A line of a web process's output. */
  readonly onWebLine = (line: string): void => {
    if (line.trim()) this.showLine('web', line);
  };

  /** A line of a click worker's output: its status lines, chunk retries, warnings and errors. */
  readonly onWorkerLine = (line: string): void => {
    this.workerWatcher.onLine(line);
    let rec: {
      level?: number;
      msg?: string;
      err?: { message?: string; code?: string };
    } & Partial<WorkerStatus>;
    try {
      rec = JSON.parse(line) as typeof rec;
    } catch {
      if (line.trim()) this.showLine('worker', line);
      return;
    }
    if (rec.msg === 'click worker status') {
      const s: WorkerStatus = {
        at: Date.now(),
        perSecond: rec.perSecond ?? 0,
        lagP50Ms: rec.lagP50Ms ?? 0,
        lagP99Ms: rec.lagP99Ms ?? 0,
        messages: rec.messages ?? 0,
      };
      this.workerStatus.push(s);
      this.progress.workerP99 = s.lagP99Ms;
      process.stderr.write(
        `[worker] status: ${int(s.perSecond)} msg/s, lag p50 ${ms(s.lagP50Ms)} p99 ${ms(s.lagP99Ms)}\n`,
      );
      return;
    }
    if (rec.msg === 'chunk failed, retrying') {
      this.workerRetries.total++;
      if (rec.err?.code === '40P01') this.workerRetries.deadlocks++;
    }
    if ((rec.level ?? 0) >= 40) {
      const err = rec.err ? `: ${rec.err.message ?? ''}${rec.err.code ? ` (${rec.err.code})` : ''}` : '';
      this.showLine('worker', `${rec.level! >= 50 ? 'ERROR' : 'WARN'} ${rec.msg ?? line}${err}`);
    }
  };
}
