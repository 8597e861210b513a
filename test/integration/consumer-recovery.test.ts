// A consumer whose partitions' leader and group coordinator die goes on (issue 37; the behaviours
// kafkajs-consumer-recovery held for kafkajs). Three nodes; the node that coordinates the group and leads
// some of the topic's partitions is killed (-9) while a producer sends and the consumer reads:
// - the consumer fetches again from the partitions' new leaders, without a crash or a group rebalance
//   (@platformatic/kafka 2.12.1 without the project's patch destroyed its messages stream, "Cannot find
//   broker with node id 3", and the consumer was replaced: patches/@platformatic+kafka+2.12.1.patch, "fetch
//   again where the leader moved");
// - a dead coordinator costs no rebalance: the consumer heartbeats and commits to the new one;
// - every send acknowledged is in the log (send-retry.test.ts holds a send whose partitions moved apart).
// Asserted: every acknowledged message consumed, one join (no rebalance, no replaced consumer). No time.
import t from 'tap';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { STACK_DIR, freePort } from '../../scripts/lib/stack/stack.ts';
import { startKafkaCluster } from '../../scripts/lib/stack/kafka-server.ts';
import { createLogger } from '../../shared/logger.ts';
import { connectProducer, createKafka, runBatchConsumer } from '../../shared/pipeline/kafka.ts';
import { waitFor } from '../helpers/stack.ts';

const log = createLogger('consumer-recovery-test', 'warn');
const PARTITIONS = 6;
/** Generous bounds: a wait that never ends fails the test instead of hanging it. */
const BOUND_MS = 240_000;

t.test('a dead leader and coordinator: sends land or fail, the consumer goes on, no rebalance', async (t) => {
  const dir = join(STACK_DIR, `consumer-recovery-${process.pid}`);
  const ports = [];
  for (let i = 0; i < 3; i++) ports.push({ port: await freePort(), controllerPort: await freePort() });
  const cluster = await startKafkaCluster({ dir, ports, log });
  t.teardown(async () => {
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const kafka = createKafka(
    { kafkaBrokers: cluster.brokers.split(','), kafkaClientId: 'consumer-recovery' },
    log,
  );
  const admin = kafka.admin();
  t.teardown(() => admin.disconnect());
  const topic = 'moves';
  await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });

  const consumed = new Set<string>();
  const memberships: (number[] | null)[] = [];
  const consumer = await runBatchConsumer({
    kafka,
    groupId: 'moves',
    topics: [topic],
    chunkSize: 50,
    partitionsConcurrency: PARTITIONS,
    sessionTimeoutMs: 30_000,
    log,
    onMembership: (p) => memberships.push(p),
    handle: async (messages) => {
      for (const m of messages) consumed.add(m.value!.toString());
    },
  });
  t.teardown(() => consumer.disconnect());
  await waitFor(
    'the consumer owning every partition',
    async () => memberships.at(-1)?.length === PARTITIONS,
    BOUND_MS,
  );

  const producer = await connectProducer(kafka);
  t.teardown(() => producer.disconnect());
  const acked: string[] = [];
  let failed = 0;
  let n = 0;
  let sending = true;
  const loop = (async () => {
    while (sending) {
      const values = Array.from({ length: PARTITIONS }, () => `m${n++}`);
      try {
        await producer.send({ topic, messages: values.map((v) => ({ key: v, value: v })) });
        acked.push(...values);
      } catch {
        failed++;
      }
    }
  })();
  await waitFor('sends acknowledged before the kill', async () => acked.length >= 300, BOUND_MS);

  const coordinator = await admin.groupCoordinator('moves');
  const led = (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]!.partitions.filter(
    (p) => p.leader === coordinator,
  ).length;
  t.ok(led > 0, `node ${coordinator}, the coordinator, leads ${led} partitions`);
  const before = acked.length;
  cluster.nodes[coordinator - 1]!.kill();
  await waitFor('sends acknowledged after the kill', async () => acked.length >= before + 600, BOUND_MS);
  sending = false;
  await loop;

  await waitFor(
    'every acknowledged message consumed',
    async () => acked.every((v) => consumed.has(v)),
    BOUND_MS,
  );
  t.pass(`${acked.length} acknowledged (${failed} sends failed and were not counted), all consumed`);
  t.same(
    memberships.filter((m) => m !== null).length,
    1,
    `joined once: no rebalance, no replaced consumer (memberships: ${JSON.stringify(memberships)})`,
  );
  t.notOk(memberships.includes(null), 'never left its group');
});
