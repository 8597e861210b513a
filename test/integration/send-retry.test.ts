// A send retried after its partitions' leader died goes to each partition's new leader (issue 37; the
// behaviour kafkajs-send-retry held for kafkajs). Three nodes; the node killed (-9) leads two partitions
// whose next replicas differ (placed so), so after the kill the two have different leaders. One send that wrote both
// partitions before the kill writes both again after it: it is acknowledged, and each partition holds the
// message once. @platformatic/kafka 2.12.1 without the project's patch repeated the whole request to the
// new leader of the first message's partition, which refused the other one until the retries ran out: the
// send failed although both partitions had a leader (patches/@platformatic+kafka+2.12.1.patch, "each
// partition to its own leader"). No time is asserted: the producer retries for longer than any election.
import t from 'tap';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { STACK_DIR, freePort } from '../../scripts/lib/stack/stack.ts';
import { startKafkaCluster } from '../../scripts/lib/stack/kafka-server.ts';
import { createLogger } from '../../shared/logger.ts';
import { createKafka } from '../../shared/pipeline/kafka.ts';
import { waitFor } from '../helpers/stack.ts';

const log = createLogger('send-retry-test', 'warn');
const BOUND_MS = 240_000;

t.test('a send whose dead leader’s partitions moved to two nodes is acknowledged by both', async (t) => {
  const dir = join(STACK_DIR, `send-retry-${process.pid}`);
  const ports = [];
  for (let i = 0; i < 3; i++) ports.push({ port: await freePort(), controllerPort: await freePort() });
  const cluster = await startKafkaCluster({ dir, ports, log });
  t.teardown(async () => {
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const kafka = createKafka({ kafkaBrokers: cluster.brokers.split(','), kafkaClientId: 'send-retry' }, log);
  const admin = kafka.admin();
  t.teardown(() => admin.disconnect());
  const topic = 'retried';
  // Node 1 leads both partitions; their next replicas differ, so its death moves them to nodes 2 and 3.
  await admin.createTopics({
    topics: [
      {
        topic,
        numPartitions: 2,
        replicaAssignment: [
          [1, 2, 3],
          [1, 3, 2],
        ],
      },
    ],
    waitForLeaders: true,
  });
  const partitions = [0, 1];
  const leaders = async () =>
    (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]!.partitions.map((p) => p.leader);
  await waitFor(
    'node 1 leading both partitions',
    async () => (await leaders()).every((l) => l === 1),
    BOUND_MS,
  );

  // Retries for minutes: an election on a slow machine must not decide the outcome, only the fix.
  const producer = kafka.producer({ retries: 600 });
  t.teardown(() => producer.disconnect());
  await producer.connect();
  const send = (value: string) =>
    producer.send({ topic, messages: partitions.map((partition) => ({ value, partition })) });
  await send('before');

  cluster.nodes[0]!.kill();
  await t.resolves(send('after'), 'the send after the kill is acknowledged');

  await waitFor(
    'both partitions led by a live node',
    async () => (await leaders()).every((l) => l === 2 || l === 3),
    BOUND_MS,
  );
  t.same(await leaders(), [2, 3], 'now led by nodes 2 and 3');
  const ends = await admin.fetchTopicOffsets(topic);
  for (const p of partitions)
    t.equal(ends[p]!.high, '2', `partition ${p}: the message before and the one after, each once`);
});
