// The click loss restart.test.ts found (stop 14), reproduced on purpose. A produce request reaches the
// broker and is written, but its answer never comes back (the broker killed right after the write), and
// the broker stays away until kafkajs gives the send up. kafkajs's idempotent producer then hands the
// batch's sequence numbers back, so the next batch to that partition goes out with the same sequence; the
// broker takes it for a retry of the written one, answers success and drops it: an acknowledged message
// that is not in the log. The project's producer must not acknowledge anything the log does not hold.
import t from 'tap';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import type { ISocketFactory } from 'kafkajs';
import { connectProducer } from '../../shared/pipeline/kafka.ts';
import { stackEnv, waitFor } from '../helpers/stack.ts';

/** Sockets the test can mute (answers dropped) and a "broker away" switch (connections refused). */
function faultySockets() {
  const state = { mute: false, away: false };
  const open = new Set<net.Socket>();
  const factory: ISocketFactory = ({ host, port, onConnect }) => {
    if (state.away) {
      const s = new net.Socket();
      const err = Object.assign(new Error(`connect ECONNREFUSED ${host}:${port} (test: broker away)`), {
        code: 'ECONNREFUSED',
      });
      process.nextTick(() => s.destroy(err));
      return s;
    }
    const socket = net.connect({ host, port }, onConnect);
    const emit = socket.emit.bind(socket);
    // While muted, what the broker answers is dropped on the floor.
    socket.emit = ((event: string, ...args: unknown[]) =>
      event === 'data' && state.mute ? true : emit(event, ...args)) as typeof socket.emit;
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    return socket;
  };
  return {
    factory,
    state,
    /** What a killed broker does to its connections: reset (kafkajs listens for errors, not 'close'). */
    cutAll() {
      for (const s of open) s.destroy(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    },
  };
}

t.test('a send written by the broker but never acknowledged does not swallow the next send', async (t) => {
  const brokers = stackEnv().KAFKA_BROKERS.split(',');
  const topic = `lost-ack-${randomUUID().slice(0, 8)}`;
  const plain = new Kafka({ clientId: 'lost-ack-admin', brokers, logLevel: logLevel.NOTHING });
  const admin = plain.admin();
  await admin.connect();
  t.teardown(() => admin.disconnect());
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });

  const sockets = faultySockets();
  const kafka = new Kafka({
    clientId: 'lost-ack-test',
    brokers,
    logLevel: logLevel.NOTHING,
    socketFactory: sockets.factory,
    retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 8 },
  });
  const producer = await connectProducer(kafka);
  t.teardown(() => producer.disconnect().catch(() => {}));
  await producer.send({ topic, acks: -1, messages: [{ value: 'warm-up' }] });

  // The broker writes "first"; its answer is lost, and the broker is away until the send is given up.
  sockets.state.mute = true;
  const first = producer.send({ topic, acks: -1, messages: [{ value: 'first' }] });
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
  await producer.send({ topic, acks: -1, messages: [{ value: 'second' }] });

  const values: string[] = [];
  const consumer = plain.consumer({ groupId: `lost-ack-${randomUUID()}` });
  t.teardown(() => consumer.disconnect());
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const high = (await admin.fetchTopicOffsets(topic))[0]!.high;
  await new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: async ({ message }) => {
        values.push(message.value!.toString());
        if (BigInt(message.offset) + 1n >= BigInt(high)) resolve();
      },
    });
  });
  t.ok(
    values.includes('second'),
    `the acknowledged send is in the log (log holds ${JSON.stringify(values)})`,
  );
  t.ok(values.includes('first'), 'the written one is in the log too');
});
