// kafkajs's send retried after a broker failed (patches/kafkajs+2.2.4.patch, "acknowledged per partition"):
// the retry must send every partition not yet acknowledged to its current leader, even when that leader is a
// broker that already acknowledged the send's other partitions. Unpatched, kafkajs 2.2.4 retried only to
// brokers that had not answered, so a partition whose leader moved to such a broker was never sent again
// and the send resolved anyway (clicks answered 200 and lost in the cluster chaos run). kafkajs's own
// sendMessages and retrier run here against a fake cluster of two brokers; no network.
import t from 'tap';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
type Message = { key: string; value: string; partition: number };
type Produced = { topic: string; partitions: { partition: number; messages: Message[] }[] };
type Broker = { nodeId: number; produce(req: { topicData: Produced[] }): Promise<unknown> };
type Send = (req: {
  acks: number;
  timeout: number;
  topicMessages: { topic: string; messages: Message[] }[];
}) => Promise<{ topicName: string; partition: number }[]>;

const createSendMessages = require('kafkajs/src/producer/sendMessages.js') as (deps: unknown) => Send;
const createRetry = require('kafkajs/src/retry/index.js') as (opts: unknown) => unknown;
const { KafkaJSConnectionError } = require('kafkajs/src/errors.js') as {
  KafkaJSConnectionError: new (msg: string) => Error;
};

const TOPIC = 'clicks';

/**
 * Two brokers and two partitions. `leaders()` gives each partition's leader (or null: no metadata for it)
 * as the cluster's metadata says now; refreshMetadata moves to the next state. `fail` says which broker
 * answers which attempt with a connection error.
 */
function fakeCluster(states: (number | null)[][], fail: (nodeId: number, attempt: number) => boolean) {
  let state = 0;
  const attempts = new Map<number, number>();
  const written: { nodeId: number; partition: number; key: string }[] = [];
  const broker = (nodeId: number): Broker => ({
    nodeId,
    async produce({ topicData }) {
      const n = (attempts.get(nodeId) ?? 0) + 1;
      attempts.set(nodeId, n);
      if (fail(nodeId, n)) throw new KafkaJSConnectionError(`broker ${nodeId} is gone`);
      for (const { partitions } of topicData)
        for (const p of partitions)
          for (const m of p.messages) written.push({ nodeId, partition: p.partition, key: m.key });
      return {
        topics: topicData.map(({ topic, partitions }) => ({
          topicName: topic,
          partitions: partitions.map((p) => ({ partition: p.partition, errorCode: 0, baseOffset: '0' })),
        })),
      };
    },
  });
  const brokers = new Map([1, 2].map((id) => [id, broker(id)]));
  const metadata = () =>
    states[state]!.flatMap((leader, partitionId) => (leader === null ? [] : [{ partitionId, leader }]));
  const cluster = {
    targetTopics: new Set<string>(),
    async addMultipleTargetTopics() {},
    async refreshMetadataIfNecessary() {},
    async refreshMetadata() {
      state = Math.min(state + 1, states.length - 1);
    },
    isConnected: () => true,
    removeBroker() {},
    findTopicPartitionMetadata: () => metadata(),
    findLeaderForPartitions(_topic: string, partitions: (string | number)[]) {
      const out: Record<number, number[]> = {};
      for (const id of partitions) {
        const m = metadata().find((p) => p.partitionId === Number(id));
        if (m) out[m.leader] = [...(out[m.leader] ?? []), m.partitionId];
      }
      return out;
    },
    async findBroker({ nodeId }: { nodeId: number | string }) {
      return brokers.get(Number(nodeId))!;
    },
  };
  return { cluster, written };
}

const eosManager = {
  isTransactional: () => false,
  acquireBrokerLock: async () => {},
  releaseBrokerLock: async () => {},
  getSequence: () => 0,
  updateSequence: () => {},
  getProducerId: () => -1,
  getProducerEpoch: () => 0,
  getTransactionalId: () => undefined,
};
const logger = { debug() {}, info() {}, warn() {}, error() {} };

function sender(cluster: unknown): Send {
  return createSendMessages({
    logger,
    cluster,
    partitioner: ({ message }: { message: Message }) => message.partition,
    eosManager,
    retrier: createRetry({ retries: 5, initialRetryTime: 1, maxRetryTime: 5 }),
  });
}

const messages: Message[] = [
  { key: 'a', value: '1', partition: 0 },
  { key: 'b', value: '2', partition: 1 },
  { key: 'c', value: '3', partition: 0 },
  { key: 'd', value: '4', partition: 1 },
];

t.test('a partition whose leader moved to a broker that already answered is sent there', async (t) => {
  // Partition 0 on broker 1, partition 1 on broker 2; broker 2 dies during the send, and the refreshed
  // metadata has broker 1 leading both.
  const { cluster, written } = fakeCluster(
    [
      [1, 2],
      [1, 1],
    ],
    (nodeId) => nodeId === 2,
  );
  const result = await sender(cluster)({
    acks: -1,
    timeout: 1000,
    topicMessages: [{ topic: TOPIC, messages }],
  });
  t.same(
    written.map((w) => w.key).sort(),
    ['a', 'b', 'c', 'd'],
    'every message written once the send resolved',
  );
  t.same(
    written.filter((w) => w.partition === 1).map((w) => w.nodeId),
    [1, 1],
    "partition 1's messages went to its new leader, broker 1",
  );
  t.same(result.map((r) => r.partition).sort(), [0, 1], 'the result names both partitions');
});

t.test('a partition missing from the metadata is retried, not skipped', async (t) => {
  // At first the metadata knows partition 0 only; partition 1 appears after a refresh.
  const { cluster, written } = fakeCluster(
    [
      [1, null],
      [1, 2],
    ],
    () => false,
  );
  await sender(cluster)({ acks: -1, timeout: 1000, topicMessages: [{ topic: TOPIC, messages }] });
  t.same(written.map((w) => w.key).sort(), ['a', 'b', 'c', 'd'], 'every message written');
});

t.test('an acknowledged partition is not sent again when another broker fails', async (t) => {
  // Broker 2 fails its first attempt only, and keeps its partition: broker 1's acknowledged partition 0
  // must not be written a second time by the retry.
  const { cluster, written } = fakeCluster(
    [
      [1, 2],
      [1, 2],
    ],
    (nodeId, attempt) => nodeId === 2 && attempt === 1,
  );
  await sender(cluster)({ acks: -1, timeout: 1000, topicMessages: [{ topic: TOPIC, messages }] });
  t.same(
    written.map((w) => `${w.key}@${w.nodeId}`).sort(),
    ['a@1', 'b@2', 'c@1', 'd@2'],
    'each message written once, by its leader',
  );
});
