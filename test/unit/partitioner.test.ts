// Message keys stay on the partitions kafkajs's default partitioner put them on before the move to
// @platformatic/kafka: the producer places a key with compatibilityPartitioner (murmur2 of its bytes, as the
// Java client), and liveness.ts partitionOf, which the ingress uses to know which worker owns a command,
// says the same. The expected partitions were computed with kafkajs 2.2.4's DefaultPartitioner (100,000
// keys and partition counts compared before it was removed: no difference).
import t from 'tap';
import { partitionOf } from '../../shared/pipeline/liveness.ts';

const KAFKAJS_CHOSE: [key: string, partitions: number, partition: number][] = [
  ['cust_0_0', 6, 1],
  ['0190a1-7c2e-7000-8000-1', 6, 2],
  ['pl_2', 6, 4],
  ['cust_23757_3', 6, 2],
];

t.test("a key's partition is the one kafkajs gave it", async (t) => {
  for (const [key, count, partition] of KAFKAJS_CHOSE)
    t.equal(partitionOf('topic', key, count), partition, `${key} of ${count}`);
});
