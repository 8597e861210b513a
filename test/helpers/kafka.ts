// Reading a topic of a test's own Kafka prefix from the beginning, e.g. to see what the outbox relay
// published: `const seen = await readTopic(t, svc.prefix, 'mail')` fills `seen` as messages arrive.
import { randomBytes } from 'node:crypto';
import { createKafka, readTopic as readKafkaTopic } from '../../shared/pipeline/kafka.ts';
import { topicName } from '../../shared/contracts/topics.ts';
import type { TopicKey } from '../../shared/contracts/topics.ts';
import { createLogger } from '../../shared/logger.ts';
import { stackEnv } from './stack.ts';
import type { Teardown } from './stack.ts';

export interface TopicMessage {
  key: string | null;
  value: string;
  headers: Record<string, string>;
}

/** Consumes `prefix + topic` from the beginning into the returned array until `t`'s teardown. */
export async function readTopic(t: Teardown, prefix: string, topic: TopicKey): Promise<TopicMessage[]> {
  const kafka = createKafka(
    { kafkaBrokers: stackEnv().KAFKA_BROKERS.split(','), kafkaClientId: 'svc-test-reader' },
    createLogger('test-reader', 'error'),
  );
  const seen: TopicMessage[] = [];
  const reader = await readKafkaTopic(
    kafka,
    { topic: topicName(prefix, topic), groupId: `${prefix}reader-${randomBytes(4).toString('hex')}` },
    (m) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(m.headers ?? {})) if (v !== undefined) headers[k] = String(v);
      seen.push({ key: m.key?.toString() ?? null, value: m.value?.toString() ?? '', headers });
    },
  );
  t.teardown(() => reader.close());
  return seen;
}
