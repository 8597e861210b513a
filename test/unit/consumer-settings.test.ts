// The Kafka consumer's settings (shared/pipeline/kafka-consumer.ts): the client accepts them for every
// session timeout the configuration allows (KAFKA_SESSION_TIMEOUT_MS, 6 s to 300 s), a member heartbeats
// at most 3 s apart however long its session (it learns of a rebalance from a heartbeat's answer), and a
// consumer whose settings the client refuses fails its start at once instead of waiting for Kafka as for an
// outage (a 180 s session once left two click workers waiting forever). No broker.
import t from 'tap';
import { Consumer } from '@platformatic/kafka';
import { KafkaClient } from '../../shared/pipeline/kafka.ts';
import { ConsumerSettingsError, consumerSettings } from '../../shared/pipeline/kafka-consumer.ts';
import { runBatchConsumer } from '../../shared/pipeline/kafka.ts';
import { createLogger } from '../../shared/logger.ts';

const log = createLogger('consumer-settings-test', 'silent');
// Nothing listens there: the client connects on its first request only, which these tests never make.
const kafka = new KafkaClient(['127.0.0.1:1'], 'consumer-settings-test', log);

t.test('every configurable session timeout is accepted, with heartbeats at most 3 s apart', async (t) => {
  for (const sessionTimeoutMs of [6_000, 10_000, 45_000, 60_000, 180_000, 300_000]) {
    const settings = consumerSettings({ kafka, groupId: 'g', sessionTimeoutMs });
    const consumer = new Consumer(settings);
    await consumer.close(true);
    t.ok(
      settings.heartbeatInterval <= 3_000 && settings.heartbeatInterval * 3 <= sessionTimeoutMs,
      `session ${sessionTimeoutMs} ms: heartbeat every ${settings.heartbeatInterval} ms, rebalance ${settings.rebalanceTimeout} ms`,
    );
  }
});

t.test('settings the client refuses end the start at once, not as an outage waited out', async (t) => {
  await t.rejects(
    runBatchConsumer({
      kafka,
      groupId: 'g',
      topics: ['t'],
      chunkSize: 10,
      partitionsConcurrency: 1,
      sessionTimeoutMs: -1,
      log,
      handle: async () => {},
    }),
    ConsumerSettingsError,
  );
});
