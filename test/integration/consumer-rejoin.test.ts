// After a broker kill -9 and restart, a consumer (runBatchConsumer, as every worker runs it) is still the
// member it was, and consumes again. As a new member it would wait for the old one's session to expire
// (10 s after the broker's return) before it is given partitions; kafkajs needed a fix for it (it crashed
// and rejoined as a new member). @platformatic/kafka's fetch retries through an outage; when the broker stays
// away past the client's retries it ends the consumer's messages stream, and the consumer then consumes
// again on the same client, as the same member, instead of replacing itself (a new member). Whether the
// client ends the stream within the outage varies from run to run (each path is commented); the member id
// and the memberships are asserted on both, not a time.
import t from 'tap';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { STACK_DIR, freePort } from '../../scripts/lib/stack/stack.ts';
import { startKafka } from '../../scripts/lib/stack/kafka-server.ts';
import { createLogger } from '../../shared/logger.ts';
import { createKafka, runBatchConsumer } from '../../shared/pipeline/kafka.ts';
import { waitFor } from '../helpers/stack.ts';

/** The consumer's log lines (warnings): whether the client ended the stream, and whether it was replaced. */
const lines: string[] = [];
const log = createLogger(
  'consumer-rejoin-test',
  'warn',
  new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  }),
);
const STREAM_ENDED = 'messages stream ended; consuming again as the same member';
/** How long the broker stays away at most once the sends failed, waiting for the client to end the stream. */
const OUTAGE_MS = 30_000;
/** A generous bound on each wait, so that a join that never comes fails the test instead of hanging it. */
const BOUND_MS = 180_000;

t.test('a consumer keeps its group membership through a broker restart', async (t) => {
  const dir = join(STACK_DIR, `rejoin-${process.pid}`);
  const ports = { port: await freePort(), controllerPort: await freePort() };
  let broker = await startKafka({ dir, ...ports, log });
  t.teardown(async () => {
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const kafka = createKafka({ kafkaBrokers: [broker.brokers], kafkaClientId: 'rejoin-test' }, log);
  const admin = kafka.admin({ retries: 2 });
  t.teardown(() => admin.disconnect());
  await admin.createTopics({ topics: [{ topic: 'rejoin', numPartitions: 3 }], waitForLeaders: true });

  const memberships: (number[] | null)[] = [];
  const seen = new Set<string>();
  const consumer = await runBatchConsumer({
    kafka,
    groupId: 'rejoin',
    topics: ['rejoin'],
    chunkSize: 10,
    partitionsConcurrency: 3,
    sessionTimeoutMs: 10_000,
    log,
    onMembership: (p) => memberships.push(p),
    handle: async (messages) => {
      for (const m of messages) seen.add(m.value!.toString());
    },
  });
  t.teardown(() => consumer.disconnect());
  await waitFor(
    'the consumer owning every partition',
    async () => memberships.at(-1)?.length === 3,
    BOUND_MS,
  );
  const [before] = await admin.describeGroup('rejoin');
  t.ok(before, `member ${before?.memberId}`);

  // Down for longer than the client retries anything (two sends' retries, one after the other, run out):
  // long enough for the client to end the consumer's messages stream.
  broker.kill();
  await new Promise((r) => broker.process.once('exit', r));
  const producer = kafka.producer();
  t.teardown(() => producer.disconnect());
  for (const n of [1, 2])
    await t.rejects(
      producer.send({ topic: 'rejoin', messages: [{ value: `lost ${n}` }] }),
      `send ${n} with the broker away fails`,
    );
  // Away a little longer, until the client ends the consumer's messages stream (usually within the sends'
  // retries) or OUTAGE_MS passed.
  const awaySince = Date.now();
  while (!lines.some((l) => l.includes(STREAM_ENDED)) && Date.now() - awaySince < OUTAGE_MS) {
    await new Promise((r) => setTimeout(r, 250));
  }
  t.comment(
    lines.some((l) => l.includes(STREAM_ENDED))
      ? 'the client ended the messages stream during the outage; the consumer consumed again on it'
      : 'the client kept its messages stream through the outage',
  );
  broker = await startKafka({ dir, ...ports, log });

  await waitFor(
    'a message sent after the restart consumed',
    async () => {
      await producer.send({ topic: 'rejoin', messages: [{ key: 'k', value: 'after' }] });
      return seen.has('after');
    },
    BOUND_MS,
    1000,
  );
  await waitFor(
    'the group with one member',
    async () => (await admin.describeGroup('rejoin')).length === 1,
    BOUND_MS,
    500,
  );
  const after = await admin.describeGroup('rejoin');
  t.same(
    after.map((m) => m.memberId),
    [before!.memberId],
    'the member it was, so the coordinator waits for no old one',
  );
  t.notOk(memberships.includes(null), `never replaced (memberships: ${JSON.stringify(memberships)})`);
  t.notOk(
    lines.some((l) => l.includes('consumer stopped; starting a new one')),
    'the consumer was not replaced by a new one',
  );
});
