// `npm start` keeps the service up when a server dies (issue 35), through the real script (scripts/start.ts
// on a throwaway data directory, as chaos --supervised runs it): kill -9 of the Kafka broker, of the
// Postgres postmaster and of MailDev, each started again by its supervisor with the same data and port;
// every service reaches Postgres and Kafka again without being restarted itself, and a click, a sale
// decided through Postgres, answer again; /metrics counts each restart. A broker whose port another
// process took meanwhile stops everything: exit 1, one line naming the server, the reason and its log file.
import t from 'tap';
import { createServer } from 'node:net';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { STACK_DIR, freePort } from '../../scripts/lib/stack/stack.ts';
import { SupervisedStack } from '../../scripts/lib/chaos/supervised.ts';
import { seedBenchProgram } from '../../scripts/lib/bench/seed.ts';
import { createSql } from '../../shared/db/sql.ts';
import { waitFor } from '../helpers/stack.ts';

const dir = join(STACK_DIR, `start-supervisor-${process.pid}`);
const lines: string[] = [];
const unexpected: string[] = [];
const stack = await SupervisedStack.start({
  dir,
  cluster: false,
  replicas: 1,
  env: { KAFKA_PREFIX: `supervisor${process.pid}.`, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' },
  onLine: (line) => {
    lines.push(line);
    if (lines.length > 2000) lines.splice(0, 500);
  },
  onUnexpectedExit: (unit, code) => unexpected.push(`${unit} ${code}`),
});
t.teardown(async () => {
  await stack.stop();
  await rm(dir, { recursive: true, force: true });
});
t.teardown(() => {
  if (!t.passing()) t.comment(lines.slice(-40).join('\n'));
});

const sql = createSql(stack.databaseUrl, 2, 'svc-test');
t.teardown(() => sql.end({ timeout: 5 }));
const program = await seedBenchProgram(sql, { customers: 10, customerKeys: true });

/** Posts until an answer other than 503 (bounded): the service is back. */
async function answered(path: string, body: unknown, headers: Record<string, string> = {}) {
  return waitFor(
    `${path} answered`,
    async () => {
      const r = await fetch(`${stack.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      }).catch(() => null);
      return r && r.status !== 503
        ? { status: r.status, body: (await r.json()) as Record<string, unknown> }
        : null;
    },
    120_000,
  );
}

const restarts = async (unit: string) => (await stack.status()).find((u) => u.name === unit)!.restarts;
const serviceRestarts = async () =>
  (await stack.status()).filter((u) => u.kind === 'service').reduce((n, u) => n + u.restarts, 0);

t.test('a killed Kafka broker is started again and clicks answer 200 again', async (t) => {
  const { pid } = await stack.hit('kafka');
  await stack.back('kafka', pid);
  t.equal(await restarts('kafka'), 1, 'restarted once');
  const click = await answered('/api/v1/track/click', { affiliate_url: 'https://shop.example/?aff=bench' });
  t.equal(click.status, 200, 'a click is accepted again');
  const metrics = await (await fetch(`${stack.supervisorUrl}/metrics`)).text();
  t.match(metrics, /svc_supervisor_restarts_total\{unit="kafka",kind="server",process="supervisor"\} 1/);
});

t.test(
  'a killed postmaster is started again; every service reaches it again without a restart',
  async (t) => {
    const { pid } = await stack.hit('postgres');
    await stack.back('postgres', pid);
    t.equal(await restarts('postgres'), 1, 'restarted once');
    await stack.ready(180_000); // every service's /readyz: Postgres reachable again
    const sale = await answered(
      '/api/v1/track/sale',
      { transaction_id: `after-pg-${process.pid}`, amount_cents: 1000, customer_key: 'bench-1' },
      { authorization: `Bearer ${program.token}` },
    );
    t.equal(sale.status, 200, 'a sale is decided through Postgres again');
    t.ok(sale.body.commission_id, 'with its commission');
    t.equal(await serviceRestarts(), 0, 'no service was restarted for it');
  },
);

t.test('a killed MailDev is started again', async (t) => {
  const { pid } = await stack.hit('maildev');
  await stack.back('maildev', pid);
  t.equal(await restarts('maildev'), 1);
  t.same(unexpected, [], 'no exit the test did not cause');
});

t.test('a broker whose port another process took stops everything: exit 1, one line naming it', async (t) => {
  const { pid: supervisorPid, units } = await stack.supervisor();
  const kafka = units.find((u) => u.name === 'kafka')!;
  const port = Number(stack.brokers.split(':')[1]);
  // By construction, not by racing the back-off: the supervisor is paused while the broker dies and this
  // process takes its port, then resumes, finds the port taken and gives up.
  process.kill(supervisorPid, 'SIGSTOP');
  // The services' Kafka clients connect to it meanwhile: each connection is closed at once.
  const holder = createServer((socket) => socket.destroy());
  try {
    process.kill(kafka.pid!, 'SIGKILL');
    await waitFor(
      'the broker port taken by this process',
      () =>
        new Promise<boolean>((resolve) => {
          holder.once('error', () => resolve(false));
          holder.listen(port, '127.0.0.1', () => resolve(true));
        }),
      60_000,
    );
  } finally {
    process.kill(supervisorPid, 'SIGCONT');
  }
  const exit = await stack.exited();
  await new Promise<void>((r) => holder.close(() => r()));
  t.equal(exit.code, 1, 'exit 1');
  const giveUp = lines.find((l) => l.includes('is down and stays down'));
  t.ok(giveUp, 'the give-up line');
  const msg = String((JSON.parse(giveUp!) as { msg: string }).msg);
  t.match(
    msg,
    `kafka broker (port ${port}) is down and stays down: it cannot start again: port ${port} (kafka broker) is already in use by process ${process.pid}`,
  );
  t.match(msg, `its log: ${join(dir, 'logs', 'kafka.log')}; stopping everything`);
  t.notOk(
    lines.some((l) => /"level":50/.test(l) && /"stack":/.test(l)),
    'no stack trace among the error lines',
  );
  t.ok(await freePort(), 'ports still to be had');
});
