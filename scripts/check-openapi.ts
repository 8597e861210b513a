// npm run check:openapi: does the OpenAPI document tell the truth? Starts a throwaway stack, signs in as
// the demo owner and the demo partner, and runs schemathesis (PyPI, pinned; `--checks all`) against every
// operation of the document the web process serves. Any failure is exit 1. See docs/api.md "The OpenAPI
// document, checked" for what is configured and why.
import { spawn, execFile } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { access, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cli } from './lib/cli.ts';
import { freePort, onStopSignal, STACK_DIR } from './lib/stack/stack.ts';
import { startStack } from './lib/stack/start.ts';
import type { Stack } from './lib/stack/start.ts';
import { lineWatcher, spawnService, waitForWeb } from './lib/stack/services.ts';
import type { ServiceName, ServiceProcess } from './lib/stack/services.ts';
import { startFailed } from './lib/stack/servers.ts';
import { seedDemo, seedDemoOwner } from './lib/seed/seed.ts';
import { seedDemoPartner } from './lib/seed/partner.ts';
import { seedDemoTraffic } from './lib/seed/demo-traffic.ts';
import { migrate } from '../shared/db/migrate.ts';
import { createSql } from '../shared/db/sql.ts';
import { createLogger } from '../shared/logger.ts';
import { loadConfig } from '../shared/config.ts';
import { createKafka, ensureTopics } from '../shared/pipeline/kafka.ts';
import { ENDING, FAILING_WARNINGS, METHODS, UNSTATED, UPSTREAM } from './lib/openapi-runs.ts';

const SCHEMATHESIS = '4.32.5';

const USAGE = `Usage: npm run check:openapi [-- options]

Checks that the OpenAPI document (GET /api/v1/openapi.json) tells the truth: starts a throwaway stack in
.stack/openapi/ (Postgres, Kafka, the web process and the workers whose outcomes answer leads, sales and
refunds), seeds the demo program (with its demo traffic), owner and partner, signs in, and runs schemathesis ${SCHEMATHESIS}
with --checks all against every operation: undocumented status codes, content types or headers, answers
that do not match their schema, valid requests refused, invalid ones accepted, a method a path does not
declare answered otherwise than 405 with Allow, a 5xx. Exit 1 on any failure, with a summary by check.
schemathesis is installed on first use into the git-ignored virtualenv .stack/venv/ (python3 -m venv, pip).

The run is bounded and repeatable: a fixed seed, deterministic generation, at most --max-examples cases per
operation and phase, each request bounded by --request-timeout, the whole run by --timeout. Operations that
end the credentials the run uses (logout, ending a session, regenerating or deleting the demo program) run
last, each alone with credentials of its own; rate limits are off for this stack (loopback exempt).

Options:
  --seed <n>             the seed (default 29)
  --max-examples <n>     cases per operation and phase (default 15)
  --workers <n>          schemathesis's concurrent workers (default 1: threads hit a bug of Python < 3.11.8)
  --request-timeout <s>  one request's bound, seconds (default 10)
  --timeout <s>          the whole run's bound, seconds (default 600)
  --only <regex>         only the operations whose path matches (a partial run, to fix one route)
  --keep                 keep .stack/openapi/ (the services' log, schemathesis's reports) after the run
  -h, --help             this text
Arguments after \`--\` go to \`schemathesis run\` as they are (e.g. \`-- --report har\`: every request and
answer, in .stack/openapi/ with --keep).`;

const { values, positionals, int } = cli(USAGE, {
  seed: { type: 'string' },
  'max-examples': { type: 'string' },
  workers: { type: 'string' },
  'request-timeout': { type: 'string' },
  timeout: { type: 'string' },
  only: { type: 'string' },
  keep: { type: 'boolean' },
});
const seed = int('seed', 29, 2 ** 31 - 1, 0);
const maxExamples = int('max-examples', 15, 10_000);
// One worker by default: schemathesis's threads meet a CPython bug (gh-106905, "AST constructor recursion
// depth mismatch", fixed in 3.11.8 and 3.12.2) on the Pythons of Debian 12 and of this machine.
const workers = int('workers', 1, 16);
const requestTimeout = int('request-timeout', 10, 600);
const timeoutMs = int('timeout', 600, 86_400) * 1000;
const only = values.only as string | undefined;

const log = createLogger('check-openapi', process.env.LOG_LEVEL ?? 'info');
const started = Date.now();
const DIR = join(STACK_DIR, 'openapi');
const VENV = join(STACK_DIR, 'venv');
const bin = (name: string) => join(VENV, 'bin', name);

/** The stack's environment: production rules (https-only webhooks, PUBLIC_URL unset), no rate limits. */
function serviceEnv(stack: Stack, port: number): Record<string, string> {
  return {
    DATABASE_URL: stack.databaseUrl,
    KAFKA_BROKERS: stack.kafkaBrokers,
    PORT: String(port),
    OPS_PORT: '',
    LOG_LEVEL: 'warn',
    // Thousands of requests from loopback: every per-address limit exempts it, the per-email ones are off.
    RATE_LIMIT_EXEMPT: '127.0.0.1,::1,::ffff:127.0.0.1',
    AUTH_RATE_LIMIT_EXEMPT: '127.0.0.1,::1,::ffff:127.0.0.1',
    AUTH_FAILURES_PER_EMAIL: '0',
    AUTH_RATE_LIMIT_PER_MINUTE: '0',
    // The commissions the demo traffic would make stay as they are during the run.
    APPROVAL_SWEEP_MS: 'off',
    // Imports keep their credentials sealed (as npm start's generated key does): without one they are 503.
    IMPORT_SECRET_KEY: randomBytes(32).toString('hex'),
  };
}

/** The virtualenv with the pinned schemathesis, made when missing or holding another version. */
async function ensureSchemathesis(): Promise<void> {
  const version = await promisify(execFile)(bin('schemathesis'), ['--version']).then(
    (r) => r.stdout.trim(),
    () => '',
  );
  if (version.endsWith(` ${SCHEMATHESIS}`)) return;
  log.info({ venv: VENV }, `installing schemathesis ${SCHEMATHESIS} (once)`);
  const run = (cmd: string, args: string[]) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'] });
      child.once('error', reject);
      child.once('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`${cmd} exited with ${code}`)),
      );
    });
  await access(bin('pip')).catch(() => run('python3', ['-m', 'venv', VENV]));
  await run(bin('pip'), ['install', '--quiet', `schemathesis==${SCHEMATHESIS}`]);
}

async function post(base: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** A session of the seeded account: the `data.session_token` of its login, checked by its prefix. */
async function sessionToken(base: string, path: string, login: unknown, prefix: string): Promise<string> {
  const token = ((await post(base, path, login)).data as { session_token?: unknown } | undefined)
    ?.session_token;
  if (typeof token !== 'string' || !token.startsWith(prefix)) {
    throw new Error(`POST ${path}: no ${prefix}… session_token in the answer`);
  }
  return token;
}

interface Credentials {
  session: string;
  partnerSession: string;
  trackingToken: string;
  /** The demo program, the owner's: an UPSTREAM operation runs alone (no stateful phase finds it one). */
  programId: number;
}

/** The configuration schemathesis reads: the credential of each security scheme, the bounds. */
function configToml(base: string, c: Credentials): string {
  return `# Written by scripts/check-openapi.ts for one run.
base-url = "${base}"
seed = ${seed}
workers = ${workers}
request-timeout = ${requestTimeout}
continue-on-failure = true

[generation]
max-examples = ${maxExamples}
deterministic = true
database = "none"

[cache]
enabled = false

[checks]
enabled = true

${Object.keys(UNSTATED)
  .map(
    (name) => `[[operations]]
include-name = "${name}"
checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "429", "5xx"]
`,
  )
  .join('\n')}
${Object.keys(UPSTREAM)
  .map(
    (name) => `[[operations]]
include-name = "${name}"
parameters = { "path.id" = ${c.programId} }
`,
  )
  .join('\n')}
[auth.openapi.session]
bearer = "${c.session}"

[auth.openapi.partnerSession]
bearer = "${c.partnerSession}"

[auth.openapi.trackingToken]
bearer = "${c.trackingToken}"
`;
}

interface Report {
  operations: { total: number; selected: number; tested: number; errored: number } | null;
  test_cases: { generated: number; with_failures: number; unique_failures: number; errored: number };
  failures: { title: string; count: number; operations: string[] }[];
  errors: { title: string; count: number }[];
  /** Each kind of warning with the operations it names. */
  warnings: Record<string, string[]>;
  exit_code: number;
}

/** The schemathesis run under way, if any: stopped first on Ctrl-C or SIGTERM. */
let fuzzer: ChildProcess | null = null;

/** One schemathesis run: `filter` selects its operations; the report says what it found. */
async function schemathesis(name: string, base: string, c: Credentials, filter: string[]): Promise<Report> {
  const config = join(DIR, `${name}.toml`);
  const report = join(DIR, `${name}.json`);
  await writeFile(config, configToml(base, c), { mode: 0o600 });
  const args = [
    '--config-file',
    config,
    'run',
    `${base}/api/v1/openapi.json`,
    '--checks',
    'all',
    '--report',
    'json',
    '--report-json-path',
    report,
    '--no-color',
    ...positionals,
    ...filter,
  ];
  log.info({ run: name, filter: filter.join(' ') || 'all' }, 'schemathesis');
  const child = spawn(bin('schemathesis'), args, { cwd: DIR, stdio: ['ignore', 'inherit', 'inherit'] });
  fuzzer = child;
  const bound = setTimeout(() => child.kill('SIGKILL'), Math.max(1, deadline - Date.now()));
  await new Promise((resolve) => child.once('exit', resolve));
  fuzzer = null;
  clearTimeout(bound);
  if (Date.now() >= deadline) throw new Error(`schemathesis did not finish within --timeout`);
  return JSON.parse(await readFile(report, 'utf8')) as Report;
}

// ---- the run ----

const deadline = started + timeoutMs;
await ensureSchemathesis();
await rm(DIR, { recursive: true, force: true });
await mkdir(DIR, { recursive: true });
const stack = await startStack({ name: 'openapi', fresh: true, fast: true, log }).catch((err) =>
  startFailed(log, err),
);
const running: ServiceProcess[] = [];
let exitCode = 1;
let stopped: Promise<void> | null = null;
/** Stops schemathesis, the services and the stack, once (the signal and the run's end may both ask). */
function stopAll(): Promise<void> {
  stopped ??= (async () => {
    fuzzer?.kill('SIGKILL');
    await Promise.allSettled(running.map((s) => s.stop()));
    await stack.stop();
    if (!values.keep) await rm(DIR, { recursive: true, force: true });
  })();
  return stopped;
}
onStopSignal(async () => {
  log.info('stopping: Ctrl-C or SIGTERM');
  await stopAll();
  process.exit(130);
});

try {
  const port = await freePort();
  const env = serviceEnv(stack, port);
  const cfg = loadConfig({ ...process.env, ...env });
  await migrate(stack.databaseUrl, log);
  await ensureTopics(createKafka(cfg, log), cfg, log);
  const sql = createSql(stack.databaseUrl, 2, 'svc-check-openapi');
  const demo = await seedDemo(sql, join(DIR, 'token.txt'));
  const owner = await seedDemoOwner(sql, demo.workspaceId, join(DIR, 'owner.txt'));
  const partner = await seedDemoPartner(sql, demo, join(DIR, 'partner.txt'));
  // Real rows behind the reads (clicks, customers, sales, commissions), so answers are checked with data.
  await sql.begin((tx) => seedDemoTraffic(tx, demo.programId, demo.links, Date.now()));
  await sql.end();

  const serviceLog = createWriteStream(join(DIR, 'services.log'));
  const watcher = lineWatcher();
  const start = async (name: ServiceName) => {
    const p = spawnService(name, {
      env: name === 'web' ? env : { ...env, LOG_LEVEL: 'info' },
      onLine: (line) => {
        serviceLog.write(`[${name}] ${line}\n`);
        watcher.onLine(`[${name}] ${line}`);
      },
    });
    running.push(p);
    if (name === 'web') return waitForWeb(p, port, 120_000);
    // A consumer answers commands once it has joined its group.
    await watcher.waitFor(new RegExp(`\\[${name}\\].*joined its group`), 120_000);
  };
  // The workers whose outcomes answer a request (a lead, a sale, a refund): without them those are 503s.
  await Promise.all((['web', 'click-worker', 'attribution-worker', 'reversal-worker'] as const).map(start));
  const base = `http://127.0.0.1:${port}`;
  const signIn = async (): Promise<Credentials> => ({
    session: await sessionToken(base, '/api/auth/login', owner, 'sess_'),
    partnerSession: await sessionToken(base, '/api/partner/auth/login', partner, 'psess_'),
    trackingToken: demo.trackingToken,
    programId: demo.programId,
  });
  log.info({ base, seconds: Math.round((Date.now() - started) / 1000) }, 'stack ready');

  const onlyFilter = only === undefined ? [] : ['--include-path-regex', only];
  const reports: { name: string; report: Report }[] = [];
  // First, while the demo program is as seeded (the main run's requests change it: a later run was 403).
  for (const [i, op] of Object.keys(UPSTREAM).entries()) {
    const path = op.slice(op.indexOf(' ') + 1);
    if (only !== undefined && !new RegExp(only).test(path)) continue;
    const name = `upstream-${i + 1}`;
    const filter = ['--include-name', op, '--exclude-checks', 'not_a_server_error'];
    reports.push({ name, report: await schemathesis(name, base, await signIn(), filter) });
  }
  // A partial run (--only) whose regex matches none of the main run's operations skips it: schemathesis
  // with nothing to test exits 1, which the summary would count as a failing run.
  const alone = new Set([...ENDING, ...Object.keys(UPSTREAM)]);
  const document = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  const mainOperations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((method) => METHODS.includes(method) && !alone.has(`${method.toUpperCase()} ${path}`))
      .map(() => path),
  );
  if (only === undefined || mainOperations.some((path) => new RegExp(only).test(path))) {
    reports.push({
      name: 'main',
      report: await schemathesis('main', base, await signIn(), [
        ...onlyFilter,
        ...ENDING.flatMap((op) => ['--exclude-name', op]),
        ...Object.keys(UPSTREAM).flatMap((op) => ['--exclude-name', op]),
      ]),
    });
  }
  for (const [i, op] of ENDING.entries()) {
    const path = op.slice(op.indexOf(' ') + 1);
    if (only !== undefined && !new RegExp(only).test(path)) continue;
    const name = `ending-${i + 1}`;
    reports.push({ name, report: await schemathesis(name, base, await signIn(), ['--include-name', op]) });
  }

  // ---- the summary ----
  const sum = (f: (r: Report) => number) => reports.reduce((n, { report }) => n + f(report), 0);
  const operations = sum((r) => r.operations?.tested ?? 0);
  const cases = sum((r) => r.test_cases.generated);
  const byCheck = new Map<string, { count: number; operations: Set<string> }>();
  for (const { report } of reports) {
    for (const f of report.failures) {
      const entry = byCheck.get(f.title) ?? { count: 0, operations: new Set<string>() };
      entry.count += f.count;
      for (const o of f.operations) entry.operations.add(o);
      byCheck.set(f.title, entry);
    }
  }
  const failures = [...byCheck.values()].reduce((n, e) => n + e.count, 0);
  const errors = reports.flatMap(({ name, report }) =>
    report.errors.map((e) => `${name}: ${e.title} (${e.count})`),
  );
  const warnings = new Map<string, Set<string>>();
  for (const { report } of reports) {
    for (const [kind, ops] of Object.entries(report.warnings ?? {})) {
      if (ops.length === 0) continue;
      const entry = warnings.get(kind) ?? new Set<string>();
      for (const o of ops) entry.add(o);
      warnings.set(kind, entry);
    }
  }
  // A rule of UNSTATED refuses most generated requests of its operation: that is the warning it gives.
  for (const name of Object.keys(UNSTATED)) warnings.get('validation_mismatch')?.delete(name);
  if (warnings.get('validation_mismatch')?.size === 0) warnings.delete('validation_mismatch');
  const failingWarnings = [...warnings.keys()].filter((k) => FAILING_WARNINGS.includes(k));
  // schemathesis exits non-zero on failures and errors (counted above); any other non-zero exit is one too.
  const badExit = reports.filter(
    ({ report }) => report.exit_code !== 0 && report.failures.length === 0 && report.errors.length === 0,
  );
  const seconds = Math.round((Date.now() - started) / 1000);
  const lines = [
    '',
    `check:openapi: ${operations} operations, ${cases} cases, ${failures} failures, ${errors.length} errors (${seconds} s; seed ${seed}, schemathesis ${SCHEMATHESIS})`,
    ...[...byCheck.entries()].map(
      ([title, e]) => `  ${String(e.count).padStart(4)}  ${title}: ${[...e.operations].sort().join('; ')}`,
    ),
    ...errors.map((e) => `  error: ${e}`),
    ...[...warnings.entries()].map(
      ([kind, ops]) =>
        `  ${FAILING_WARNINGS.includes(kind) ? 'failing warning' : 'warning'} ${kind}: ${[...ops].sort().join('; ')}`,
    ),
    ...badExit.map(({ name, report }) => `  ${name}: schemathesis exited ${report.exit_code}`),
  ];
  process.stdout.write(lines.join('\n') + '\n');
  const clean = failures === 0 && errors.length === 0 && failingWarnings.length === 0 && badExit.length === 0;
  exitCode = clean && operations > 0 ? 0 : 1;
} catch (err) {
  // Once stopping on a signal, what the interrupted run throws is no news.
  if (stopped === null) log.error({ err }, 'check:openapi could not run');
  exitCode = 1;
} finally {
  await stopAll();
}
process.exit(exitCode);
