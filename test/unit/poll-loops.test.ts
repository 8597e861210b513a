// Every poll loop runs on startPeriodic (shared/pipeline/periodic.ts), so its stop() waits for the round in
// hand: the tracking cache's invalidation poll, the outcome waiter's fallback poll, the ingress's view of
// consumer heartbeats, a worker's heartbeat and its evictor. Each against a fake Postgres whose queries wait
// at a gate the test opens: stop() must not resolve while a query of the loop is still out, and no round
// may start after it. (The click worker's housekeeping is a worker-context `periodic` task: the runtime
// stops it the same way.)
import t from 'tap';
import type { Test } from 'tap';
import type { Sql } from '../../shared/db/sql.ts';
import { createLogger } from '../../shared/logger.ts';
import { startPeriodic } from '../../shared/pipeline/periodic.ts';
import { TrackingCache } from '../../services/ingress/tracking-cache.ts';
import { OutcomeWaiter } from '../../shared/pipeline/outcomes.ts';
import { ConsumerLiveness, startEvictor, startHeartbeat } from '../../shared/pipeline/liveness.ts';
import type { KafkaAdmin } from '../../shared/pipeline/kafka.ts';

const log = createLogger('test', 'silent');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = async (what: string, ok: () => boolean) => {
  for (let i = 0; i < 1000 && !ok(); i++) await sleep(5);
  if (!ok()) throw new Error(`never: ${what}`);
};

/** A fake `sql`: records each query's text; while `closed`, a query waits until `open()` is called. */
function gatedSql() {
  const events: string[] = [];
  let release: () => void = () => {};
  let gate: Promise<void> | null = null;
  const state = {
    events,
    /** Queries sent so far. */
    sent: () => events.filter((e) => e.startsWith('sent ')).length,
    /** Queries sent and not answered yet. */
    out: () =>
      events.filter((e) => e.startsWith('sent ')).length - events.filter((e) => e.startsWith('done ')).length,
    close() {
      gate = new Promise<void>((r) => (release = r));
    },
    open() {
      gate = null;
      release();
    },
  };
  const query = (strings: TemplateStringsArray) => {
    const text = strings.join('$').replace(/\s+/g, ' ').trim().slice(0, 60);
    events.push(`sent ${text}`);
    const waitFor = gate;
    return (async () => {
      await waitFor;
      events.push(`done ${text}`);
      return text.includes('max(seq)') ? [{ seq: '0' }] : [];
    })();
  };
  const sql = Object.assign(query, {
    listen: async () => ({ unlisten: async () => {} }),
  }) as unknown as Sql;
  return { sql, state };
}

/** stop() called while a round's query waits: it resolves only after the query, and nothing runs after. */
async function stopWaitsForRound(
  t: Test,
  state: ReturnType<typeof gatedSql>['state'],
  stop: () => Promise<void>,
) {
  await until('a round sent its query', () => state.out() > 0);
  let stopped = false;
  const stopping = stop().then(() => (stopped = true));
  await sleep(50);
  t.equal(stopped, false, 'stop() waits while the round in hand is out');
  state.open();
  await stopping;
  t.equal(stopped, true, 'stop() resolves once the round ended');
  const after = state.events.length;
  await sleep(100);
  t.equal(state.events.length, after, 'no round starts after stop()');
}

t.test('startPeriodic: delayFirst waits one interval (or a wake) before the first round', async (t) => {
  let rounds = 0;
  const task = startPeriodic(
    {
      name: 'x',
      intervalMs: 400,
      delayFirst: true,
      run: async () => (rounds++, false),
    },
    log,
  );
  await sleep(50);
  t.equal(rounds, 0, 'no round at once');
  await until('the first round after the interval', () => rounds === 1);
  task.wake();
  await until('a wake starts one at once', () => rounds === 2);
  await task.stop();

  let woken = 0;
  const early = startPeriodic(
    { name: 'y', intervalMs: 60_000, delayFirst: true, run: async () => (woken++, false) },
    log,
  );
  early.wake();
  await until('a wake during the first wait starts the first round', () => woken === 1);
  await early.stop();
});

t.test('tracking cache: stop() waits for the invalidation poll in hand', async (t) => {
  const { sql, state } = gatedSql();
  const cache = new TrackingCache(sql, log, { pollMs: 300, ttlMs: 60_000 });
  await cache.start();
  t.equal(state.sent(), 1, 'start read the last sequence');
  await sleep(5);
  t.equal(state.sent(), 1, 'the first poll comes after pollMs, as before');
  state.close();
  await stopWaitsForRound(t, state, () => cache.stop());
});

t.test('outcome waiter: stop() waits for the fallback poll in hand, then ends the waits', async (t) => {
  const { sql, state } = gatedSql();
  const waiter = new OutcomeWaiter(sql, log, { pollMs: 20 });
  await waiter.start();
  const waiting = waiter.wait('lead:1:a', 60_000);
  state.close();
  await stopWaitsForRound(t, state, () => waiter.stop());
  t.equal(await waiting.promise, null, 'a wait still open at stop() ends with null');
});

t.test("ingress's consumer liveness: stop() waits for the heartbeat read in hand", async (t) => {
  const { sql, state } = gatedSql();
  const liveness = new ConsumerLiveness(sql, log, { clicks: 2 });
  state.close();
  liveness.start();
  await stopWaitsForRound(t, state, () => liveness.stop());
});

t.test('worker heartbeat: stop() waits for the beat in hand, then removes its row', async (t) => {
  const { sql, state } = gatedSql();
  state.close();
  const heartbeat = startHeartbeat(sql, log, { group: 'g', topic: 'clicks', member: 'm' });
  await until('the first beat at once', () => state.out() > 0);
  let stopped = false;
  const stopping = heartbeat.stop().then(() => (stopped = true));
  await sleep(50);
  t.equal(stopped, false, 'stop() waits while the beat is out');
  t.notOk(
    state.events.some((e) => e.includes('delete from consumer_heartbeats where member')),
    'the row is not removed before the beat in hand ended',
  );
  state.open();
  await stopping;
  const beatDone = state.events.findIndex((e) => e.startsWith('done insert into consumer_heartbeats'));
  const removed = state.events.findIndex((e) =>
    e.startsWith('sent delete from consumer_heartbeats where member'),
  );
  t.ok(beatDone >= 0 && removed > beatDone, 'the row is removed after the beat ended');
  const after = state.events.length;
  await sleep(700);
  t.equal(state.events.length, after, 'no beat after stop()');
});

t.test('evictor: stop() waits for the check in hand', async (t) => {
  const { sql, state } = gatedSql();
  state.close();
  const evictor = startEvictor({
    sql,
    log,
    // Heartbeats written for long enough: the evictor reads the silent members.
    heartbeat: { member: 'm', set() {}, writingSince: () => 0, stop: async () => {} },
    group: 'g',
    admin: {} as KafkaAdmin,
    clientIdOf: (m) => m,
  });
  await stopWaitsForRound(t, state, () => evictor.stop());
});
