// The frame of a bench that starts its own stack (bench:sales, bench:webhooks): a fresh stack, a logger and
// a status line, the services and helpers to stop afterwards (also on Ctrl-C), and the exit code.
import { onStopSignal, startStack } from './stack.ts';
import type { Stack } from './stack.ts';
import type { ServiceProcess } from './services.ts';
import { createLogger } from '../../shared/logger.ts';
import type { Logger } from '../../shared/logger.ts';

/** The options every load bench takes. */
export const LOAD_OPTIONS = {
  rate: { type: 'string' },
  seconds: { type: 'string' },
  fast: { type: 'boolean' },
} as const;

export interface BenchRun {
  log: Logger;
  /** A progress line on stderr, `[bench:<name>] ...`. */
  status: (msg: string) => void;
  stack: Stack;
  /** Services to stop at the end. */
  procs: ServiceProcess[];
  /** Anything else to stop at the end (a baseline server). */
  cleanups: (() => Promise<void>)[];
}

/**
 * Runs `body` on a fresh stack named `bench-<name>` and exits: 0 when it returns true, 1 when it returns
 * false or throws (the error printed), 130 on Ctrl-C; the services and the stack are stopped in every case.
 */
export async function runBench(
  name: string,
  fast: boolean | undefined,
  body: (run: BenchRun) => Promise<boolean>,
): Promise<never> {
  const label = `bench:${name}`;
  const log = createLogger(`bench-${name}`, 'warn');
  const stack = await startStack({ name: `bench-${name}`, fresh: true, fast, log });
  const run: BenchRun = {
    log,
    status: (msg) => process.stderr.write(`[${label}] ${msg}\n`),
    stack,
    procs: [],
    cleanups: [],
  };
  const teardown = async () => {
    await Promise.allSettled([...run.procs.map((p) => p.stop()), ...run.cleanups.map((f) => f())]);
    await stack.stop();
  };
  onStopSignal(() => teardown().then(() => process.exit(130)));
  let passed = false;
  try {
    passed = await body(run);
  } catch (err) {
    process.stderr.write(`${label} failed: ${(err as Error).stack}\n`);
  } finally {
    await teardown();
  }
  process.exit(passed ? 0 : 1);
}
