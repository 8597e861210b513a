// coalesce: chunks submitted by concurrent partition handlers are applied together, in submission order,
// bounded by maxMessages; every submitter settles with the call that carried its messages.
import t from 'tap';
import { coalesce } from '../../shared/pipeline/coalesce.ts';
import type { ConsumedMessage } from '../../shared/pipeline/kafka.ts';

const msg = (partition: number, offset: number): ConsumedMessage => ({
  topic: 't',
  partition,
  offset: String(offset),
  key: null,
  value: Buffer.from(`${partition}:${offset}`),
  headers: undefined,
  timestamp: '0',
});
const label = (ms: ConsumedMessage[]) => ms.map((m) => `${m.partition}:${m.offset}`);

t.test('submissions of one turn share a call; later ones wait for the running call and merge', async (t) => {
  const calls: string[][] = [];
  let release: () => void = () => {};
  const handle = coalesce(async (ms) => {
    calls.push(label(ms));
    if (calls.length === 1) await new Promise<void>((r) => (release = r));
  }, 100);
  const first = [handle([msg(0, 1), msg(0, 2)]), handle([msg(1, 1)])];
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  t.same(calls, [['0:1', '0:2', '1:1']], 'both partitions of one turn in the first call');
  const later = [handle([msg(2, 1)]), handle([msg(0, 3)])];
  await new Promise((r) => setTimeout(r, 20));
  t.equal(calls.length, 1, 'nothing else runs while a call is in flight');
  release();
  await Promise.all([...first, ...later]);
  t.same(
    calls,
    [
      ['0:1', '0:2', '1:1'],
      ['2:1', '0:3'],
    ],
    'the waiting submissions merged, in order',
  );
});

t.test('maxMessages bounds a call (a single larger submission still runs alone)', async (t) => {
  const calls: string[][] = [];
  const handle = coalesce(async (ms) => void calls.push(label(ms)), 3);
  await Promise.all([
    handle([msg(0, 1), msg(0, 2)]),
    handle([msg(1, 1), msg(1, 2)]),
    handle([msg(2, 1), msg(2, 2), msg(2, 3), msg(2, 4)]),
    handle([msg(3, 1)]),
  ]);
  t.same(calls, [['0:1', '0:2'], ['1:1', '1:2'], ['2:1', '2:2', '2:3', '2:4'], ['3:1']]);
});

t.test('a failed call rejects exactly its submitters; the next call still runs', async (t) => {
  let n = 0;
  const handle = coalesce(async (ms) => {
    n++;
    if (label(ms).includes('1:1')) throw new Error('boom');
  }, 2);
  const results = await Promise.allSettled([handle([msg(0, 1)]), handle([msg(1, 1)]), handle([msg(2, 1)])]);
  t.same(
    results.map((r) => r.status),
    ['rejected', 'rejected', 'fulfilled'],
    'the first call carried 0:1 and 1:1 and failed',
  );
  t.equal(n, 2);
  await handle([msg(0, 1)]);
  t.equal(n, 3, 'usable after a failure');
});

t.test('concurrency 2: two calls at once, one submission each while a call could still start', async (t) => {
  const calls: string[][] = [];
  let inFlight = 0;
  let most = 0;
  const releases: (() => void)[] = [];
  const handle = coalesce(
    async (ms) => {
      calls.push(label(ms));
      most = Math.max(most, ++inFlight);
      await new Promise<void>((r) => releases.push(r));
      inFlight--;
    },
    100,
    2,
  );
  const first = [handle([msg(0, 1)]), handle([msg(1, 1)]), handle([msg(2, 1)])];
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  t.same(calls, [['0:1'], ['1:1', '2:1']], 'the first call takes one; the last slot merges the rest');
  const later = [handle([msg(0, 2)]), handle([msg(3, 1)])];
  await new Promise((r) => setTimeout(r, 20));
  t.equal(calls.length, 2, 'nothing more runs while both calls are in flight');
  releases.shift()!();
  await first[0];
  await new Promise((r) => setImmediate(r));
  t.same(calls[2], ['0:2', '3:1'], 'a freed slot (the last one free) takes the waiting submissions merged');
  while (releases.length > 0 || calls.length < 3) {
    releases.shift()?.();
    await new Promise((r) => setImmediate(r));
  }
  await Promise.all([...first, ...later]);
  t.equal(most, 2, 'never more than two calls at once');
});
