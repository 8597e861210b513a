// BatchingProducer's bound and circuit (issue 11 item 1) against a fake producer whose sends the
// test settles by hand: a send past the bound rejects with ProduceUnavailableError, a send while another
// is stuck is refused at once (with one broker; with replicated topics it waits), the trial after a failure
// goes out, and an acknowledgement closes the circuit.
import t from 'tap';
import type { Sender } from '../../shared/pipeline/kafka-producer.ts';
import { BatchingProducer, ProduceUnavailableError, failsFast } from '../../shared/pipeline/kafka.ts';

function fakeProducer() {
  const sends: { resolve: () => void; reject: (e: Error) => void; count: number }[] = [];
  const producer = {
    sendBatch: (req: { topicMessages: { messages: unknown[] }[] }) =>
      new Promise<void>((resolve, reject) => {
        const count = req.topicMessages.reduce((n, tm) => n + tm.messages.length, 0);
        sends.push({ resolve, reject, count });
      }),
    disconnect: async () => {},
  } as unknown as Sender;
  return { producer, sends };
}
const settled = <T>(p: Promise<T>) =>
  p.then(
    () => 'ok',
    (e: Error) => e,
  );
const tick = () => new Promise((r) => setImmediate(r));

t.test('a send not acknowledged within the bound rejects with ProduceUnavailableError', async (t) => {
  const { producer, sends } = fakeProducer();
  const p = new BatchingProducer(producer, { lingerMs: 0, maxBatch: 100, timeoutMs: 50 });
  const r = await settled(p.send('topic', { value: 'a' }));
  t.ok(r instanceof ProduceUnavailableError, String(r));
  t.equal(sends.length, 1, 'it went out once');
  t.equal(p.available, false, 'the circuit is open');
});

t.test('while a send is stuck, new sends are refused at once; an ack closes the circuit', async (t) => {
  const { producer, sends } = fakeProducer();
  const p = new BatchingProducer(producer, { lingerMs: 0, maxBatch: 100, timeoutMs: 50 });
  await settled(p.send('topic', { value: 'a' }));
  // Refused without going out: no second request, and it settles before any timer could fire.
  const refused = await Promise.race([
    settled(p.send('topic', { value: 'b' })),
    new Promise((r) => setImmediate(() => r('pending'))),
  ]);
  t.ok(refused instanceof ProduceUnavailableError, `refused at once: ${String(refused)}`);
  t.equal(sends.length, 1, 'nothing more was sent');
  sends[0]!.resolve();
  await tick();
  t.equal(p.available, true, 'the late acknowledgement closed the circuit');
  const ok = settled(p.send('topic', { value: 'c' }));
  await tick();
  sends[1]!.resolve();
  t.equal(await ok, 'ok', 'sends flow again');
});

t.test('with replicated topics (failFast false), a send while one is stuck waits for it', async (t) => {
  const { producer, sends } = fakeProducer();
  const p = new BatchingProducer(producer, { lingerMs: 0, maxBatch: 100, timeoutMs: 200, failFast: false });
  await settled(p.send('topic', { value: 'a' }));
  t.equal(p.available, false, 'the circuit is open');
  // Not refused: it waits behind the stuck request, and goes out once that one is acknowledged (a
  // partition's new leader), within its own bound.
  const waiting = settled(p.send('topic', { value: 'b' }));
  const early = await Promise.race([waiting, new Promise((r) => setTimeout(() => r('pending'), 20))]);
  t.equal(early, 'pending', 'not refused at once');
  sends[0]!.resolve();
  await tick();
  t.equal(sends.length, 2, 'it went out after the stuck one');
  sends[1]!.resolve();
  t.equal(await waiting, 'ok', 'and was acknowledged');
});

t.test('fail fast with one copy of each topic, wait with replicated topics', async (t) => {
  t.equal(failsFast({ kafkaReplicationFactor: null }), true, "unset: the broker's default, one broker");
  t.equal(failsFast({ kafkaReplicationFactor: 1 }), true);
  t.equal(failsFast({ kafkaReplicationFactor: 3 }), false);
});

t.test('after a failed send with nothing out, the next send is the trial', async (t) => {
  const { producer, sends } = fakeProducer();
  const p = new BatchingProducer(producer, { lingerMs: 0, maxBatch: 100, timeoutMs: 5_000 });
  const first = settled(p.send('topic', { value: 'a' }));
  await tick();
  sends[0]!.reject(new Error('Connection error: connect ECONNREFUSED'));
  const r = await first;
  t.ok(r instanceof ProduceUnavailableError, 'a refused request rejects the batch');
  t.equal(p.available, false);
  const trial = settled(p.send('topic', { value: 'b' }));
  await tick();
  t.equal(sends.length, 2, 'the trial went out');
  sends[1]!.resolve();
  t.equal(await trial, 'ok');
  t.equal(p.available, true);
});

t.test('not connected yet: refused at once; attach lets sends through', async (t) => {
  const { producer, sends } = fakeProducer();
  const p = new BatchingProducer(null, { lingerMs: 0, maxBatch: 100, timeoutMs: 5_000 });
  t.equal(p.connected, false);
  const r = await settled(p.send('topic', { value: 'a' }));
  t.ok(r instanceof ProduceUnavailableError, 'refused');
  p.attach(producer);
  const ok = settled(p.send('topic', { value: 'b' }));
  await tick();
  sends[0]!.resolve();
  t.equal(await ok, 'ok');
  t.equal(sends[0]!.count, 1, 'the refused message was never queued');
});

t.test('a message that timed out while still queued never goes out', async (t) => {
  const { producer, sends } = fakeProducer();
  const p = new BatchingProducer(producer, { lingerMs: 0, maxBatch: 100, timeoutMs: 50 });
  const a = settled(p.send('topic', { value: 'a' }));
  await tick();
  // Queued behind the request in flight (the circuit is still closed).
  const b = settled(p.send('topic', { value: 'b' }));
  t.ok((await a) instanceof ProduceUnavailableError);
  t.ok((await b) instanceof ProduceUnavailableError);
  sends[0]!.resolve();
  await tick();
  await tick();
  t.equal(sends.length, 1, 'b was dropped from the queue, not sent after its caller got a 503');
});

t.test('whenUnavailable resolves when the circuit opens, not before, and not once cancelled', async (t) => {
  const { producer, sends } = fakeProducer();
  const p = new BatchingProducer(producer, { lingerMs: 0, maxBatch: 100, timeoutMs: 5_000 });
  const acked = settled(p.send('topic', { value: 'a' }));
  await tick();
  const watch = p.whenUnavailable();
  const cancelled = p.whenUnavailable();
  cancelled.cancel();
  let opened = false;
  void watch.promise.then(() => (opened = true));
  sends[0]!.resolve();
  await acked;
  await tick();
  t.equal(opened, false, 'an acknowledgement does not tell the watcher anything');
  const failed = settled(p.send('topic', { value: 'b' }));
  await tick();
  sends[1]!.reject(new Error('Connection error: connect ECONNREFUSED'));
  await failed;
  await tick();
  t.equal(opened, true, 'the failed send opened the circuit and told the watcher');
  const late = await Promise.race([
    cancelled.promise.then(() => 'told'),
    new Promise((r) => setImmediate(() => r('not told'))),
  ]);
  t.equal(late, 'not told', 'a cancelled watcher is forgotten');
});
