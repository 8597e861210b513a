// The delivery queue's loop (shared/delivery/queue.ts) against a fake store and transport: outcomes
// recorded in batches by the claim's owner, slots held until a result is recorded, per-key slots handed to
// the claim, an attempt past the last one not made, results kept while Postgres refuses them, and the
// shutdown's grace, cut-off and release. The SMTP and HTTP transports' own answers: mail.test.ts and
// webhooks.test.ts; the whole thing against real servers: test/integration/mail*.test.ts, webhooks-*.test.ts.
import t from 'tap';
import type { Sql, Tx } from '../../shared/db/sql.ts';
import { createLogger } from '../../shared/logger.ts';
import { startPeriodic } from '../../shared/pipeline/periodic.ts';
import { startDeliveryQueue } from '../../shared/delivery/queue.ts';
import type { DeliveryStore, Result, Transport } from '../../shared/delivery/queue.ts';
import { NO_ATTEMPTS_LEFT, attemptsLeft } from '../../shared/delivery/outcome.ts';
import type { Attempted, Job } from '../../shared/delivery/outcome.ts';

const log = createLogger('test', 'silent');
const until = async (what: string, ok: () => boolean) => {
  for (let i = 0; i < 2000 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!ok()) throw new Error(`never: ${what}`);
};

type Answer = 'ok' | 'refuse' | 'hang' | 'gone';

/** Due jobs, claims with their tokens, recorded results; `failRecord` makes the next record throw. */
function fakeStore(jobs: Job<Answer>[], opts: { keyConcurrency?: number } = {}) {
  const due = [...jobs];
  const claims: { limit: number; busy: Record<string, number> }[] = [];
  const recorded: Result<Answer, string>[] = [];
  const settled: Result<Answer, string>[] = [];
  const state = { failRecord: 0, stolen: new Set<string>(), recordGate: null as Promise<void> | null };
  const store: DeliveryStore<Answer, string> = {
    async claim(limit, _leaseMs, busy) {
      claims.push({ limit, busy: Object.fromEntries(busy) });
      const out: Job<Answer>[] = [];
      for (const job of [...due]) {
        if (out.length >= limit) break;
        const inUse = (job.key ? (busy.get(job.key) ?? 0) : 0) + out.filter((j) => j.key === job.key).length;
        if (job.key && opts.keyConcurrency !== undefined && inUse >= opts.keyConcurrency) continue;
        due.splice(due.indexOf(job), 1);
        out.push(job);
      }
      return out;
    },
    async record(_tx, results) {
      await state.recordGate;
      if (state.failRecord > 0) {
        state.failRecord--;
        throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      }
      const mine = results.filter((r) => !state.stolen.has(r.job.id));
      recorded.push(...mine);
      return new Set(mine.map((r) => r.job.id));
    },
    async settle(_tx, results) {
      settled.push(...results);
      return { noticed: results.filter((r) => r.outcome.type === 'failed').length };
    },
  };
  return { store, due, claims, recorded, settled, state };
}

function fakeTransport() {
  const sent: string[] = [];
  let closed = false;
  const transport: Transport<Answer, string> = {
    async send(job, _at, signal): Promise<Attempted<string>> {
      sent.push(job.id);
      const answer = job.payload;
      if (answer === 'ok') return { type: 'accepted', detail: `250 ${job.id}` };
      if (answer === 'gone')
        return { type: 'failed', error: 'gone', answered: true, gone: true, detail: '410' };
      if (answer === 'refuse') return { type: 'failed', error: '550 no', answered: true, detail: '550' };
      return new Promise((resolve) =>
        signal.addEventListener('abort', () =>
          resolve({ type: 'failed', error: 'aborted', answered: false, detail: 'none' }),
        ),
      );
    },
    close: () => void (closed = true),
  };
  return { transport, sent, closed: () => closed };
}

const job = (id: string, payload: Answer, attempt = 1, key: string | null = null): Job<Answer> => ({
  id,
  token: `lease-${id}`,
  attempt,
  once: false,
  key,
  createdAt: new Date(Date.now() - 1000),
  payload,
});

const fakeSql = { begin: async (fn: (tx: Tx) => Promise<unknown>) => fn({} as Tx) } as unknown as Sql;

async function start(
  store: DeliveryStore<Answer, string>,
  transport: Transport<Answer, string>,
  over: { concurrency?: number; graceMs?: number } = {},
) {
  const tasks: { stop(): Promise<void> }[] = [];
  const queue = await startDeliveryQueue(
    {
      sql: fakeSql,
      log,
      periodic: (task) => {
        const running = startPeriodic(task, log);
        tasks.push(running);
        return running;
      },
    },
    {
      name: 'test',
      store,
      transport,
      policy: { scheduleMs: [1_000, 2_000], jitter: 0.2 },
      concurrency: over.concurrency ?? 10,
      leaseMs: 60_000,
      pollMs: 10,
      graceMs: over.graceMs ?? 50,
      random: () => 0.5,
    },
  );
  const stop = async () => {
    await Promise.all(tasks.map((task) => task.stop()));
    await queue.close();
  };
  return { queue, stop };
}

t.test(
  'each answer becomes its outcome, recorded and settled; the dead end named in the figures',
  async (t) => {
    const f = fakeStore([job('a', 'ok'), job('b', 'refuse', 1), job('c', 'refuse', 3), job('d', 'gone')]);
    const tr = fakeTransport();
    const { queue, stop } = await start(f.store, tr.transport);
    await until('four recorded', () => f.recorded.length === 4);
    const by = Object.fromEntries(f.recorded.map((r) => [r.job.id, r]));
    t.same(by.a!.outcome, { type: 'delivered' });
    t.equal(by.a!.detail, '250 a', "the transport's detail is recorded");
    t.same(
      by.b!.outcome,
      { type: 'retry', delayMs: 1_000, error: '550 no' },
      'the first wait, jitter at 0.5',
    );
    t.same(by.c!.outcome, { type: 'failed', error: '550 no', gone: false }, 'the last attempt failed');
    t.same(by.d!.outcome, { type: 'failed', error: 'gone', gone: true }, 'gone: at once');
    t.equal(f.settled.length, 4, 'every recorded result is settled in the same transaction');
    t.same(queue.status(), { delivered: 1, retrying: 1, failed: 1, gone: 1, noticed: 2, inFlight: 0 });
    t.equal(queue.status(), null, 'idle afterwards');
    await stop();
    t.ok(tr.closed(), 'the transport is closed on shutdown');
  },
);

t.test('an attempt past the last is not made: the dead end at once', async (t) => {
  t.notOk(attemptsLeft({ scheduleMs: [1, 2], jitter: 0 }, { attempt: 4, once: false }));
  t.ok(
    attemptsLeft({ scheduleMs: [1, 2], jitter: 0 }, { attempt: 4, once: true }),
    'one asked for by hand is',
  );
  const f = fakeStore([job('late', 'ok', 4)]);
  const tr = fakeTransport();
  const { stop } = await start(f.store, tr.transport);
  await until('recorded', () => f.recorded.length === 1);
  t.same(f.recorded[0]!.outcome, { type: 'failed', error: NO_ATTEMPTS_LEFT, gone: false });
  t.equal(f.recorded[0]!.detail, null, 'no attempt, no detail');
  t.same(tr.sent, [], 'nothing sent');
  await stop();
});

t.test('a lost lease: the result is not counted; a slot is held until its result is recorded', async (t) => {
  const f = fakeStore([job('a', 'ok'), job('b', 'ok'), job('c', 'ok')]);
  f.state.stolen.add('b');
  let open!: () => void;
  f.state.recordGate = new Promise<void>((r) => (open = r));
  const tr = fakeTransport();
  const { queue, stop } = await start(f.store, tr.transport, { concurrency: 2 });
  await until('two sent', () => tr.sent.length === 2);
  // Both answered, neither recorded: their slots stay taken, so nothing more is claimed.
  await new Promise((r) => setTimeout(r, 100));
  t.same(tr.sent.sort(), ['a', 'b']);
  t.equal(f.claims.length, 1, 'no claim while both slots wait for their results');
  t.equal(f.due.length, 1, 'c still waits');
  open();
  await until('c recorded', () => f.recorded.some((r) => r.job.id === 'c'));
  t.same(
    f.recorded.map((r) => r.job.id),
    ['a', 'c'],
    "b's lease was lost: another claim owns its row now",
  );
  t.match(queue.status(), { delivered: 2 }, 'only what was recorded counts');
  await stop();
});

t.test('per-key slots: the claim is told how many each key has in flight', async (t) => {
  const f = fakeStore([job('a1', 'hang', 1, 'A'), job('a2', 'hang', 1, 'A'), job('b1', 'hang', 1, 'B')], {
    keyConcurrency: 1,
  });
  const tr = fakeTransport();
  const { stop } = await start(f.store, tr.transport);
  await until('two in flight', () => tr.sent.length === 2);
  await until('a claim after them', () => f.claims.length >= 2);
  t.same(f.claims.at(-1)!.busy, { A: 1, B: 1 }, 'the busy keys and their counts');
  t.same(tr.sent.sort(), ['a1', 'b1'], 'one per key');
  await stop();
});

t.test('Postgres refusing the results: kept and recorded once it answers', async (t) => {
  const f = fakeStore([job('a', 'ok'), job('b', 'refuse')]);
  f.state.failRecord = 2;
  const tr = fakeTransport();
  const { stop } = await start(f.store, tr.transport);
  await until('recorded', () => f.recorded.length === 2);
  t.same(tr.sent.sort(), ['a', 'b'], 'each sent once');
  await stop();
});

t.test(
  'shutdown: the grace, then attempts cut off and released; results recorded before close returns',
  async (t) => {
    const f = fakeStore([job('slow', 'hang'), job('quick', 'ok')]);
    const tr = fakeTransport();
    const { stop } = await start(f.store, tr.transport, { graceMs: 30 });
    await until('both sent', () => tr.sent.length === 2);
    await until('quick recorded', () => f.recorded.length === 1);
    await stop();
    t.same(
      f.recorded.map((r) => [r.job.id, r.outcome.type]),
      [
        ['quick', 'delivered'],
        ['slow', 'released'],
      ],
    );
    t.ok(tr.closed());
  },
);
