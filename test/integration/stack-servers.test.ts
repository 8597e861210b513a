// The servers npm start and npm test start (scripts/lib/stack/stack.ts, kafka-server.ts, servers.ts): a port already in use is an
// error naming the port and the process that holds it, before anything starts; a Kafka node that exits
// after its start-up without stop() or kill() is reported to onServerExit's listeners (npm test then stops;
// npm start's supervisor starts it again: start-supervisor.test.ts), one stopped or killed on purpose is not. `npm start` with its web port taken exits 1 naming
// it, before it starts Postgres or Kafka.
import t from 'tap';
import type { Test } from 'tap';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { ROOT, freePort, startPostgres } from '../../scripts/lib/stack/stack.ts';
import { startKafka } from '../../scripts/lib/stack/kafka-server.ts';
import { PortInUseError, assertPortFree, onServerExit, portHolder } from '../../scripts/lib/stack/servers.ts';
import { createLogger } from '../../shared/logger.ts';

const log = createLogger('stack-servers-test', 'warn');

async function holdPort(t: Test): Promise<{ port: number }> {
  const port = await freePort();
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port };
}

const dir = await mkdtemp(join(tmpdir(), 'stack-servers-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));

t.test('a port in use names itself and the process holding it', async (t) => {
  const { port } = await holdPort(t);
  const holder = await portHolder(port);
  t.equal(holder?.pid, process.pid, 'the holder read from /proc is this process');
  const err = await assertPortFree(port, 'kafka broker').then(
    () => null,
    (e: unknown) => e,
  );
  t.ok(err instanceof PortInUseError, 'PortInUseError');
  t.match(
    (err as Error).message,
    new RegExp(`^port ${port} \\(kafka broker\\) is already in use by process ${process.pid}: .*node`),
  );
  t.resolves(assertPortFree(await freePort(), 'free'), 'a free port passes');
});

t.test('Kafka and Postgres refuse a taken port before they start', async (t) => {
  const { port } = await holdPort(t);
  await t.rejects(
    startKafka({ dir: join(dir, 'k1'), port, controllerPort: await freePort(), log }),
    { name: 'PortInUseError', message: new RegExp(`port ${port} \\(kafka broker\\)`) },
    'the broker port',
  );
  await t.rejects(
    startKafka({ dir: join(dir, 'k2'), port: await freePort(), controllerPort: port, log }),
    { name: 'PortInUseError', message: new RegExp(`port ${port} \\(kafka controller\\)`) },
    'the controller port',
  );
  await t.rejects(
    startPostgres({ dir: join(dir, 'pg'), port, database: 'x', log }),
    { name: 'PortInUseError', message: new RegExp(`port ${port} \\(postgres\\)`) },
    'the postgres port',
  );
});

t.test('a Kafka node that exits after start-up is reported; a stopped one is not', async (t) => {
  const reported: string[] = [];
  const off = onServerExit((server, code, signal) => reported.push(`${server} ${code} ${signal}`));
  t.teardown(off);
  const port = await freePort();
  const a = await startKafka({ dir: join(dir, 'ka'), port, controllerPort: await freePort(), log });
  t.teardown(() => a.stop());
  // Killed from outside, as a crash or the OOM killer would: not through its kill().
  a.process.kill('SIGKILL');
  await new Promise((r) => a.process.once('exit', r));
  await new Promise((r) => setImmediate(r));
  t.same(reported, [`kafka broker (port ${port}) null SIGKILL`], 'the unexpected exit reported');

  const b = await startKafka({
    dir: join(dir, 'kb'),
    port: await freePort(),
    controllerPort: await freePort(),
    log,
  });
  await b.stop();
  b.kill();
  await new Promise((r) => setImmediate(r));
  t.equal(reported.length, 1, 'a stop() is not reported');
});

t.test('npm start with its web port taken exits 1 naming it, before starting anything', async (t) => {
  const { port } = await holdPort(t);
  const child = spawn(
    process.execPath,
    [join(ROOT, 'scripts/start.ts'), '--port', String(port), '--json-logs'],
    {
      cwd: ROOT,
      // External servers named, so nothing embedded would start even past the check.
      env: { ...process.env, SMTP_URL: 'smtp://127.0.0.1:9', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  t.equal(code, 1, 'exit 1');
  t.match(out, `port ${port} (web) is already in use by process ${process.pid}`, 'names the port and holder');
  t.notMatch(out, /postgres started|kafka broker started|maildev started/, 'nothing started');
});
