// The frame of a bench that starts its own stack (bench:sales, bench:webhooks): a fresh stack, a logger and
// a status line, the services and helpers to stop afterwards (also on Ctrl-C), and the exit code.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { STACK_DIR, freePort, onStopSignal } from '../stack/stack.ts';
import { startStack } from '../stack/start.ts';
import type { Stack } from '../stack/start.ts';
import type { ServiceProcess } from '../stack/services.ts';
import { createLogger } from '../../../shared/logger.ts';
import type { Logger } from '../../../shared/logger.ts';
import { migrate } from '../../../shared/db/migrate.ts';
import { loadConfig } from '../../../shared/config.ts';
import { createKafka, ensureTopics } from '../../../shared/pipeline/kafka.ts';

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
 * false or throws (the error printed), 130 on Ctrl-C; the services and the stack are stopped, and the stack's
 * data removed, in every case.
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
    await rm(join(STACK_DIR, `bench-${name}`), { recursive: true, force: true });
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

/**
 * Migrates the stack's database and creates the topics; answers the environment to start the services with
 * (on a free port, topics prefixed `bench.`), `extra` added.
 */
export async function prepareServices(
  run: BenchRun,
  extra: Record<string, string> = {},
): Promise<{ port: number; env: Record<string, string> }> {
  await migrate(run.stack.databaseUrl, run.log);
  const port = await freePort();
  const env = {
    DATABASE_URL: run.stack.databaseUrl,
    KAFKA_BROKERS: run.stack.kafkaBrokers,
    KAFKA_PREFIX: 'bench.',
    PORT: String(port),
    LOG_LEVEL: 'warn',
    ...extra,
  };
  const cfg = loadConfig({ ...process.env, ...env });
  await ensureTopics(createKafka(cfg, run.log), cfg, run.log);
  return { port, env };
}
