// Waiting for a dependency (issue 11 item 3): retried until it answers, one warning line per few seconds
// without a stack, errors that waiting cannot fix rejected at once; which errors count as an outage.
import t from 'tap';
import {
  describeError,
  isOutage,
  outageWarning,
  waitForDependency,
} from '../../shared/pipeline/dependencies.ts';
import { isConnectionError } from '../../shared/db/sql.ts';
import { ProduceUnavailableError } from '../../shared/pipeline/kafka.ts';
import type { Logger } from '../../shared/logger.ts';

function fakeLog() {
  const lines: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
  const at = (level: string) => (obj: Record<string, unknown>, msg: string) =>
    lines.push({ level, obj, msg });
  return { lines, log: { warn: at('warn'), info: at('info'), debug: at('debug') } as unknown as Logger };
}
const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

t.test('waits until the dependency answers, logging once, without a stack', async (t) => {
  const { lines, log } = fakeLog();
  let calls = 0;
  const v = await waitForDependency(log, 'postgres', async () => {
    if (++calls < 4) throw refused();
    return 'up';
  });
  t.equal(v, 'up');
  t.equal(calls, 4);
  const waiting = lines.filter((l) => l.msg === 'waiting for postgres');
  t.equal(waiting.length, 1, 'one line for attempts within a few seconds');
  t.match(waiting[0]!.obj, { attempt: 1, reason: 'connect ECONNREFUSED 127.0.0.1:5432' });
  t.notOk('err' in waiting[0]!.obj || 'stack' in waiting[0]!.obj, 'no error object, so no stack');
  t.ok(lines.some((l) => l.msg === 'postgres reachable'));
});

t.test('an error waiting cannot fix is not waited out', async (t) => {
  const { log } = fakeLog();
  let calls = 0;
  const bad = Object.assign(new Error('relation "x" does not exist'), { code: '42P01' });
  await t.rejects(
    waitForDependency(
      log,
      'postgres',
      async () => {
        calls++;
        throw bad;
      },
      { retryable: isConnectionError },
    ),
    bad,
  );
  t.equal(calls, 1);
});

t.test('stops waiting once told to', async (t) => {
  const { log } = fakeLog();
  let stopped = false;
  const p = waitForDependency(
    log,
    'kafka',
    async () => {
      stopped = true;
      throw refused();
    },
    { stopped: () => stopped },
  );
  await t.rejects(p, /stopped while waiting for kafka/);
});

t.test('outages: connection errors and refused produces, not data or SQL errors', async (t) => {
  for (const code of [
    'ECONNREFUSED',
    'ECONNRESET',
    'CONNECTION_CLOSED',
    'CONNECT_TIMEOUT',
    '57P01',
    '57P03',
    '08006',
  ])
    t.ok(isOutage(Object.assign(new Error(code), { code })), code);
  t.ok(isOutage(new ProduceUnavailableError('Kafka is unreachable')), 'a refused produce');
  for (const code of ['23505', '22P02', '42P01', '40P01'])
    t.notOk(isOutage(Object.assign(new Error(code), { code })), code);
  t.notOk(isOutage(new TypeError('x is undefined')));
});

t.test('outageWarning: outages once per interval with the count left out; others every time', async (t) => {
  const { lines, log } = fakeLog();
  const warn = outageWarning(60_000);
  for (let i = 0; i < 5; i++) warn(log, refused(), 'poll failed');
  t.equal(lines.length, 1);
  t.match(lines[0]!.obj, { reason: 'connect ECONNREFUSED 127.0.0.1:5432', suppressed: 0 });
  warn(log, new TypeError('bug'), 'poll failed');
  warn(log, new TypeError('bug'), 'poll failed');
  t.equal(lines.length, 3, 'a non-outage error is logged in full each time');
  t.ok('err' in lines[2]!.obj);
});

t.test('an error that aggregates others is described with the last of them (why it failed)', async (t) => {
  const inner = Object.assign(new Error('Cannot find broker with node id 3'), { code: 'PLT_KFK_USER' });
  const agg = Object.assign(new AggregateError([refused(), inner], 'fetch failed 2 times.'), {
    code: 'PLT_KFK_MULTIPLE',
  });
  t.equal(
    describeError(agg),
    'PLT_KFK_MULTIPLE: fetch failed 2 times. (last: PLT_KFK_USER: Cannot find broker with node id 3)',
  );
  t.equal(describeError(refused()), 'connect ECONNREFUSED 127.0.0.1:5432', 'an error of its own as before');
});
