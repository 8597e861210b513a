// npm test: the whole suite against the real stack. Builds the dashboard when missing or stale, starts a
// throwaway PostgreSQL and Kafka broker (unless DATABASE_URL / KAFKA_BROKERS are set), migrates, runs tap
// over test/**/*.test.ts (or the files given), prints "N passed, N failed", and removes the throwaway
// servers and their data.
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { cli } from './lib/cli.ts';
import { ROOT, STACK_DIR, onStopSignal } from './lib/stack/stack.ts';
import { startStack } from './lib/stack/start.ts';
import { onServerExit, startFailed } from './lib/stack/servers.ts';
import { buildError, ensureDashboardBuilt } from './lib/stack/dashboard.ts';
import { FailureLog } from './lib/tap-failures.ts';
import { migrate } from '../shared/db/migrate.ts';
import { createLogger } from '../shared/logger.ts';

const USAGE = `Usage: npm test [-- [--keep] [tap files or options...]]

Runs the test suite against real servers: a fresh embedded PostgreSQL 18 and a single-node Kafka broker
(first run resolves the broker jars with Maven), both removed afterwards. Builds the dashboard first when
services/dashboard/dist is missing or older than its sources (npm run build:dashboard). Unit tests need neither; the
integration and crash tests start the project's own services as child processes.

Options:
  --keep        keep .stack/test-<pid>/ after the run (for debugging)
  -h, --help    this text
Anything else goes to tap, e.g. \`npm test -- test/unit/ids.test.ts\` or \`npm test -- --grep=inactive\`.

Environment: DATABASE_URL and KAFKA_BROKERS run against existing servers instead.`;

const argv = process.argv.slice(2);
const keep = argv.includes('--keep');
const tapArgs = argv.filter((a) => a !== '--keep');
if (tapArgs.includes('--help') || tapArgs.includes('-h')) cli(USAGE, {}, ['--help']);

const log = createLogger('test', process.env.LOG_LEVEL ?? 'info');
const name = `test-${process.pid}`;
const started = Date.now();
// The web services the tests start serve the dashboard from its build (browser tests load it). A build
// that fails stops the run here, with Vite's message, rather than as a page that never loads.
try {
  await ensureDashboardBuilt(log);
} catch (err) {
  log.error({ error: buildError(err) }, 'the dashboard did not build');
  process.exit(1);
}
log.info('starting PostgreSQL and Kafka for the tests');
const stack = await startStack({ name, fresh: true, fast: true, log }).catch((err) => startFailed(log, err));
// tap runs in a process group of its own (detached), so a signal to this process alone (a CI timeout, a
// kill) stops the test files and the services they started too, not just the stack under them.
let tapGroup: number | undefined;
function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGTERM');
  } catch {
    // already gone
  }
}
onStopSignal(async () => {
  if (tapGroup) killGroup(tapGroup);
  await stack.stop();
  if (!keep) await rm(join(STACK_DIR, name), { recursive: true, force: true });
  process.exit(130);
});
let code = 1;
try {
  await migrate(stack.databaseUrl, log);
  log.info({ seconds: ((Date.now() - started) / 1000).toFixed(1) }, 'stack ready; running tap');
  const tapBin = join(ROOT, 'node_modules', '.bin', 'tap');
  const child = spawn(tapBin, ['--reporter=tap', ...tapArgs], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      DATABASE_URL: stack.databaseUrl,
      KAFKA_BROKERS: stack.kafkaBrokers,
      PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
    },
  });
  tapGroup = child.pid;
  // The suite's Postgres or Kafka gone mid-run: every later test would fail for that reason, so the run
  // stops here and says why.
  onServerExit((server, code, signal) => {
    log.error({ server, code, signal }, `${server} exited during the tests; stopping the run`);
    if (tapGroup) killGroup(tapGroup);
  });
  let tail = '';
  const failures = new FailureLog();
  child.stdout!.on('data', (d: Buffer) => {
    process.stdout.write(d);
    tail = (tail + d.toString()).slice(-4000);
    failures.feed(d.toString());
  });
  code = await new Promise<number>((res) => child.once('exit', (c) => res(c ?? 1)));
  // tap's last summary line: "# { total: 45, pass: 44, fail: 1, skip: 0 }"
  const m = /# \{ total: (\d+)(?:, pass: (\d+))?(?:, fail: (\d+))?/.exec(
    tail.slice(tail.lastIndexOf('# { total')),
  );
  const pass = Number(m?.[2] ?? 0);
  const fail = Number(m?.[3] ?? 0);
  if (!m) log.error('tap printed no summary');
  // The failures again at the end, where a log cut to its tail still shows them.
  if (fail > 0) process.stdout.write(`\nfailed:\n${failures.summary()}\n`);
  process.stdout.write(`\n${pass} passed, ${fail} failed\n`);
  if (code === 0 && (!m || pass === 0)) code = 1;
} finally {
  await stack.stop();
  if (!keep) await rm(join(STACK_DIR, name), { recursive: true, force: true });
  log.info({ seconds: ((Date.now() - started) / 1000).toFixed(1), code }, 'tests finished');
}
process.exit(code);
