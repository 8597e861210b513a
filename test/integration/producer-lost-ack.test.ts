// A produce request reaches the broker and is written, but its answer never comes back (the broker killed
// right after the write), and the broker stays away until the client gives the send up. The project's
// producer must not acknowledge anything the log does not hold. kafkajs's idempotent producer did: it handed
// the failed batch's sequence numbers back, the next batch to that partition went out with the same
// sequence, and the broker took it for a retry of the written one, answered success and dropped it (the
// click loss restart.test.ts found). The producer the services run (connectProducer, idempotent) must
// write the next send, and keep the written one.
import t from 'tap';
import type { Test } from 'tap';
import net from 'node:net';
import { syncBuiltinESMExports } from 'node:module';
import { randomUUID } from 'node:crypto';
import { connectProducer, createKafka, readTopic } from '../../shared/pipeline/kafka.ts';
import { createLogger } from '../../shared/logger.ts';
import { stackEnv, waitFor } from '../helpers/stack.ts';

/**
 * Sockets the test can mute (answers dropped) and a "broker away" switch (connections refused). The
 * client opens its sockets with node:net's createConnection; replaced here (and synced into the ES module
 * bindings) for this process. Only sockets opened while `capture` is on are muted or cut: the producer's,
 * not the admin's that watches the log.
 */
function faultySockets(t: Test) {
  const state = { mute: false, away: false, capture: false };
  const captured = new Set<net.Socket>();
  const original = net.createConnection;
  const replacement = ((...args: Parameters<typeof net.createConnection>) => {
    const opts = args[0] as unknown as net.NetConnectOpts & { host?: string; port?: number };
    if (state.away) {
      const s = new net.Socket();
      const err = Object.assign(
        new Error(`connect ECONNREFUSED ${opts.host}:${opts.port} (test: broker away)`),
        { code: 'ECONNREFUSED' },
      );
      process.nextTick(() => s.destroy(err));
      return s;
    }
    const socket = original(...args);
    if (!state.capture) return socket;
    const emit = socket.emit.bind(socket);
    // While muted, what the broker answers is dropped on the floor.
    socket.emit = ((event: string, ...rest: unknown[]) =>
      event === 'data' && state.mute ? true : emit(event, ...rest)) as typeof socket.emit;
    captured.add(socket);
    socket.once('close', () => captured.delete(socket));
    return socket;
  }) as typeof net.createConnection;
  net.createConnection = replacement;
  syncBuiltinESMExports();
  t.teardown(() => {
    net.createConnection = original;
    syncBuiltinESMExports();
  });
  return {
    state,
    /** What a killed broker does to its connections: reset. */
    cutAll() {
      for (const s of captured)
        s.destroy(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    },
  };
}

t.test('a send written by the broker but never acknowledged does not swallow the next send', async (t) => {
  const brokers = stackEnv().KAFKA_BROKERS.split(',');
  const log = createLogger('lost-ack-test', 'warn');
  const topic = `lost-ack-${randomUUID().slice(0, 8)}`;
  const sockets = faultySockets(t);
  const admin = createKafka({ kafkaBrokers: brokers, kafkaClientId: 'lost-ack-admin' }, log).admin();
  t.teardown(() => admin.disconnect());
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });

  sockets.state.capture = true;
  const producer = await connectProducer(
    createKafka({ kafkaBrokers: brokers, kafkaClientId: 'lost-ack-test' }, log),
  );
  t.teardown(() => producer.disconnect().catch(() => {}));
  await producer.send({ topic, messages: [{ value: 'warm-up' }] });

  // The broker writes "first"; its answer is lost, and the broker is away until the send is given up.
  sockets.state.mute = true;
  const first = producer.send({ topic, messages: [{ value: 'first' }] });
  const firstWritten = async () => (await admin.fetchTopicOffsets(topic)).some((p) => Number(p.high) >= 2);
  await waitFor('the broker writing "first"', firstWritten, 120_000, 50);
  sockets.state.away = true;
  sockets.cutAll();
  const outcome = await first.then(
    () => 'acknowledged',
    () => 'failed',
  );
  t.equal(outcome, 'failed', 'the unanswered send is given up while the broker is away');

  // The broker is back: the next send is acknowledged, so it must be in the log.
  sockets.state.away = false;
  sockets.state.mute = false;
  sockets.state.capture = false;
  await producer.send({ topic, messages: [{ value: 'second' }] });

  const high = BigInt((await admin.fetchTopicOffsets(topic))[0]!.high);
  const values: string[] = [];
  let read = 0n;
  const reader = await readTopic(
    createKafka({ kafkaBrokers: brokers, kafkaClientId: 'lost-ack-reader' }, log),
    { topic, groupId: `lost-ack-${randomUUID()}` },
    (m) => {
      values.push(m.value!.toString());
      read = BigInt(m.offset) + 1n;
    },
  );
  t.teardown(() => reader.close());
  await waitFor('the log read to its end', async () => read >= high, 60_000);
  t.ok(
    values.includes('second'),
    `the acknowledged send is in the log (log holds ${JSON.stringify(values)})`,
  );
  t.ok(values.includes('first'), 'the written one is in the log too');
});
