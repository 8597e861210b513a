// A chunk that takes longer to apply than the consumer's session timeout (a backlog applied event by
// event on a busy machine: CI saw 840-event chunks of processor events take 8 to 20 s) must not cost the
// consumer its membership. Without heartbeats during the apply, the coordinator drops the member, the
// offsets commit is refused ("The coordinator is not aware of this member") and the chunk is applied again;
// under a steady backlog, again and again. Asserted: every message handed to `handle` once, one join.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { createLogger } from '../../shared/logger.ts';
import { createKafka, runBatchConsumer } from '../../shared/pipeline/kafka.ts';
import type { BatchConsumer } from '../../shared/pipeline/kafka.ts';
import { stackEnv, waitFor } from '../helpers/stack.ts';

const log = createLogger('consumer-slow-chunk-test', 'warn');
/** The broker's smallest allowed session (group.min.session.timeout.ms). */
const SESSION_MS = 6_000;
/** The first chunk's apply: well past the session timeout. */
const SLOW_MS = SESSION_MS + 4_000;

t.test('a chunk slower than the session timeout is applied once, the member kept', async (t) => {
  const kafka = createKafka(
    { kafkaBrokers: stackEnv().KAFKA_BROKERS.split(','), kafkaClientId: 'slow' },
    log,
  );
  const topic = `slow-chunk-${randomBytes(4).toString('hex')}`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  t.teardown(() => producer.disconnect());
  await producer.send({
    topic,
    messages: Array.from({ length: 20 }, (_, i) => ({ key: 'k', value: String(i) })),
  });

  const seen = new Map<string, number>();
  const joins: (number[] | null)[] = [];
  let slowOnce = true;
  let consumer: BatchConsumer | null = null;
  t.teardown(() => consumer?.disconnect());
  consumer = await runBatchConsumer({
    kafka,
    groupId: topic,
    topics: [topic],
    chunkSize: 10,
    partitionsConcurrency: 1,
    sessionTimeoutMs: SESSION_MS,
    log,
    onMembership: (partitions) => joins.push(partitions),
    handle: async (messages) => {
      for (const m of messages) seen.set(m.offset, (seen.get(m.offset) ?? 0) + 1);
      if (slowOnce) {
        slowOnce = false;
        await new Promise((r) => setTimeout(r, SLOW_MS));
      }
    },
  });
  await waitFor('all 20 messages handled', async () => seen.size === 20, 120_000);
  // Anything redelivered after a lost membership comes at once (from the last committed offset): give it
  // the time of one more session to show.
  await new Promise((r) => setTimeout(r, SESSION_MS));
  t.same(
    [...seen].filter(([, n]) => n !== 1),
    [],
    'no message handled twice',
  );
  t.same(
    joins.filter((j) => j !== null).length,
    1,
    `joined once (membership changes: ${JSON.stringify(joins)})`,
  );
});
