// The supervisor of `npm start` (scripts/lib/stack/supervisor.ts): a process that exits unexpectedly is started
// again with back-off, each exit logged with its last lines; a server whose starts keep failing, or whose
// port another process holds, is given up on once (one line naming it, the reason and its log file); a
// service never is; its own stop is not an exit to answer. With fake processes and a fast back-off, waiting
// for conditions, never for time.
import t from 'tap';
import { Writable } from 'node:stream';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Supervisor, backoffMs, serverLogs } from '../../scripts/lib/stack/supervisor.ts';
import type { GiveUp, Running, UnitKind, UnitSpec } from '../../scripts/lib/stack/supervisor.ts';
import { PortInUseError } from '../../scripts/lib/stack/servers.ts';
import type { Exit } from '../../scripts/lib/stack/servers.ts';
import { createLogger } from '../../shared/logger.ts';

const FAST = { backoff: { firstMs: 2, maxMs: 20 }, stableMs: 60_000 };

/** A fake process: `die()` ends it as a crash would; `stop()` as the supervisor's own stop. */
function fakeProcess(pid: number) {
  let end!: (e: Exit) => void;
  const exited = new Promise<Exit>((r) => (end = r));
  let stops = 0;
  const running: Running = {
    pid,
    exited,
    stop: async () => {
      stops++;
      end({ code: 0, signal: null });
    },
  };
  return { running, die: (e: Exit = { code: null, signal: 'SIGKILL' }) => end(e), stops: () => stops };
}

/** A unit whose starts answer as `behave` says (a fake process, or a thrown error). */
function fakeUnit(
  name: string,
  kind: UnitKind,
  behave: (attempt: number) => Promise<Running> | Running,
): UnitSpec & { attempts: number; processes: ReturnType<typeof fakeProcess>[] } {
  const unit = {
    name,
    kind,
    title: `${name} (fake)`,
    logFile: `/tmp/${name}.log`,
    attempts: 0,
    processes: [] as ReturnType<typeof fakeProcess>[],
    start: async () => behave(++unit.attempts),
  };
  return unit;
}

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n'))
        if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { log: createLogger('supervisor-test', 'info', stream), lines };
}

async function until(check: () => boolean | Promise<boolean>, what: string, boundMs = 20_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${boundMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

t.test('the back-off: 1 s, 2 s, 4 s … at most 30 s', async (t) => {
  t.same(
    [0, 1, 2, 3, 4, 5, 6, 40].map((n) => backoffMs(n)),
    [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000],
  );
});

t.test(
  'an exit nobody asked for is started again: logged with its last lines, counted, down meanwhile',
  async (t) => {
    const { log, lines } = capture();
    const sup = new Supervisor({
      log,
      onGiveUp: () => t.fail('no give-up'),
      backoff: { firstMs: 500, maxMs: 500 },
    });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const unit = fakeUnit('kafka-2', 'server', async (n) => {
      if (n === 2) await held; // the second start waits: the unit is seen not up meanwhile
      const p = fakeProcess(100 + n);
      unit.processes.push(p);
      return p.running;
    });
    await sup.add(unit);
    t.equal(await sup.checks['kafka-2']!(), 'ok', 'ready while up');
    sup.output('kafka-2', 'ERROR the last words of the broker');
    unit.processes[0]!.die();
    await until(() => unit.attempts === 2, 'the second start began');
    t.equal(await sup.checks['kafka-2']!(), 'starting', '/readyz names it while it is not back');
    t.equal(sup.status()[0]!.pid, null, 'no pid while down');
    release();
    await until(() => sup.status()[0]!.state === 'up', 'back up');
    const [s] = sup.status();
    t.match(s, {
      name: 'kafka-2',
      pid: 102,
      restarts: 1,
      exits: 1,
      last_exit: { code: null, signal: 'SIGKILL' },
    });
    const exit = lines.find((l) => String(l.msg).includes('exited'));
    t.match(exit, {
      level: 50,
      server: 'kafka-2',
      signal: 'SIGKILL',
      last_lines: ['ERROR the last words of the broker'],
      log_file: '/tmp/kafka-2.log',
      msg: 'kafka-2 (fake) exited (signal SIGKILL); starting it again in 0.5 s',
    });
    t.ok(
      lines.some((l) => l.msg === 'kafka-2 (fake) is back and answers' && l.new_pid === 102),
      'the restart is logged once it answers',
    );
    const metrics = await sup.registry.metrics();
    t.match(metrics, /svc_supervisor_restarts_total\{unit="kafka-2",kind="server",process="supervisor"\} 1/);
    t.match(metrics, /svc_supervisor_exits_total\{unit="kafka-2",kind="server",process="supervisor"\} 1/);
    t.match(metrics, /svc_supervisor_up\{unit="kafka-2",kind="server",process="supervisor"\} 1/);
    await sup.stop();
  },
);

t.test(
  'a server whose starts keep failing is given up on once, naming it, the reason and its log',
  async (t) => {
    const { log } = capture();
    const gaveUp: GiveUp[] = [];
    const sup = new Supervisor({ log, onGiveUp: (e) => gaveUp.push(e), ...FAST });
    const unit = fakeUnit('postgres', 'server', (n) => {
      if (n > 1) throw new Error('postgres exited during start-up: FATAL: lock file exists');
      const p = fakeProcess(1);
      unit.processes.push(p);
      return p.running;
    });
    await sup.add(unit);
    unit.processes[0]!.die();
    await until(() => gaveUp.length === 1, 'given up');
    // The crash (an exit within 10 s of starting) and four failed starts: five within five minutes.
    t.equal(unit.attempts, 5, 'no start after the fifth failure');
    t.equal(gaveUp[0]!.unit, 'postgres');
    t.match(
      gaveUp[0]!.message,
      /^postgres \(fake\) is down and stays down: 5 starts failed within 300 s \(crash loop\); its last start failed: postgres exited during start-up: FATAL: lock file exists; its log: \/tmp\/postgres\.log$/,
    );
    t.equal(sup.status()[0]!.state, 'failed');
    t.equal(await sup.checks.postgres!(), 'failed');
    await new Promise((r) => setTimeout(r, 60));
    t.equal(unit.attempts, 5, 'nothing more is tried');
    t.equal(gaveUp.length, 1, 'given up once');
    await sup.stop();
  },
);

t.test('a server that stays up a minute starts its back-off afresh and is not in a crash loop', async (t) => {
  const { log } = capture();
  const gaveUp: GiveUp[] = [];
  // Everything counts as having stayed up (stableMs 0) and nothing as an early exit: crashes only.
  const sup = new Supervisor({ log, onGiveUp: (e) => gaveUp.push(e), ...FAST, stableMs: 0, earlyExitMs: 0 });
  const unit = fakeUnit('maildev', 'server', (n) => {
    const p = fakeProcess(n);
    unit.processes.push(p);
    return p.running;
  });
  await sup.add(unit);
  for (let i = 0; i < 7; i++) {
    unit.processes[i]!.die();
    await until(() => unit.processes.length === i + 2 && sup.status()[0]!.state === 'up', `restart ${i + 1}`);
  }
  t.equal(gaveUp.length, 0, 'seven crashes of a server that ran are seven restarts');
  t.equal(sup.status()[0]!.restarts, 7);
  await sup.stop();
});

t.test('a port held by another process gives up at once', async (t) => {
  const { log } = capture();
  const gaveUp: GiveUp[] = [];
  const sup = new Supervisor({ log, onGiveUp: (e) => gaveUp.push(e), ...FAST });
  const unit = fakeUnit('kafka', 'server', (n) => {
    if (n > 1)
      throw new PortInUseError(59092, 'kafka broker', { pid: 4242, command: 'python3 -m http.server 59092' });
    const p = fakeProcess(1);
    unit.processes.push(p);
    return p.running;
  });
  await sup.add(unit);
  unit.processes[0]!.die();
  await until(() => gaveUp.length === 1, 'given up');
  t.equal(unit.attempts, 2, 'after the one start that found the port taken');
  t.match(
    gaveUp[0]!.message,
    'kafka (fake) is down and stays down: it cannot start again: port 59092 (kafka broker) is already in use by process 4242: python3 -m http.server 59092. Stop that process or choose another port; its log: /tmp/kafka.log',
  );
  await sup.stop();
});

t.test('a service is started again however often it fails, never given up on', async (t) => {
  const { log } = capture();
  const sup = new Supervisor({ log, onGiveUp: () => t.fail('a service is never given up on'), ...FAST });
  const unit = fakeUnit('click-worker', 'service', (n) => {
    const p = fakeProcess(n);
    unit.processes.push(p);
    if (n > 1) p.die({ code: 1, signal: null }); // exits at once, every time
    return p.running;
  });
  await sup.add(unit);
  unit.processes[0]!.die();
  await until(() => unit.attempts >= 8, 'eight starts');
  t.ok(sup.status()[0]!.exits >= 7);
  await sup.stop();
});

t.test("the supervisor's own stop: no restart, pending ones cancelled, a late start stopped", async (t) => {
  const { log } = capture();
  const sup = new Supervisor({
    log,
    onGiveUp: () => t.fail('no give-up'),
    backoff: { firstMs: 50, maxMs: 50 },
  });
  const stopped = fakeUnit('web', 'service', (n) => {
    const p = fakeProcess(n);
    stopped.processes.push(p);
    return p.running;
  });
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const late = fakeUnit('kafka', 'server', async (n) => {
    if (n === 2) await held;
    const p = fakeProcess(n);
    late.processes.push(p);
    return p.running;
  });
  const pending = fakeUnit('postgres', 'server', (n) => {
    const p = fakeProcess(n);
    pending.processes.push(p);
    return p.running;
  });
  await sup.add(stopped);
  await sup.add(late);
  await sup.add(pending);
  late.processes[0]!.die();
  await until(() => late.attempts === 2, 'kafka starting again');
  pending.processes[0]!.die(); // its restart is 50 ms away
  await sup.stop('service');
  t.equal(stopped.processes[0]!.stops(), 1, 'the service stopped');
  t.equal(sup.status().find((s) => s.name === 'web')!.exits, 0, 'its stop is not an exit to answer');
  await sup.stop();
  release();
  await until(
    () => late.processes.length === 1 && late.processes[0]!.stops() === 1,
    'the late start stopped',
  );
  await new Promise((r) => setTimeout(r, 120));
  t.equal(pending.attempts, 1, 'the pending restart never ran');
  t.equal(stopped.attempts, 1, 'the stopped service never restarted');
});

t.test("each server's log file and last lines", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'supervisor-logs-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const { log, lines } = capture();
  const sup = new Supervisor({ log, onGiveUp: () => {}, ...FAST });
  const logs = serverLogs(dir, sup);
  const out = logs.output('postgres');
  out('LOG:  database system is ready to accept connections');
  const unit = fakeUnit('postgres', 'server', (n) => {
    const p = fakeProcess(n);
    unit.processes.push(p);
    return p.running;
  });
  await sup.add({ ...unit, logFile: logs.file('postgres') });
  unit.processes[0]!.die();
  await until(() => lines.some((l) => String(l.msg).includes('exited')), 'the exit logged');
  t.same(lines.find((l) => String(l.msg).includes('exited'))!.last_lines, [
    'LOG:  database system is ready to accept connections',
  ]);
  await until(
    async () =>
      (await readFile(join(dir, 'postgres.log'), 'utf8').catch(() => '')).includes('ready to accept'),
    'the line in the file',
  );
  t.match(
    await readFile(join(dir, 'postgres.log'), 'utf8'),
    /^\d{4}-\d\d-\d\dT[\d:.]+Z LOG: {2}database system/,
  );
  await sup.stop();
});
