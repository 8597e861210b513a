// After a broker kill -9 and restart, a consumer rejoins its group as the member it was (the kafkajs fix in
// scripts/patch-deps.mjs). As a new member it would wait for the old one's session to expire, 10 s after
// the broker's return, before it is given partitions again. The member id is what is asserted, not a time.
import t from 'tap';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { STACK_DIR, freePort, startKafka } from '../../scripts/lib/stack.ts';
import { createLogger } from '../../shared/logger.ts';
import { createKafka } from '../../shared/pipeline/kafka.ts';

const log = createLogger('consumer-rejoin-test', 'warn');

t.test('a consumer rejoins as the same member after a broker restart', async (t) => {
  const dir = join(STACK_DIR, `rejoin-${process.pid}`);
  const ports = { port: await freePort(), controllerPort: await freePort() };
  let broker = await startKafka({ dir, ...ports, log });
  t.teardown(async () => {
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const kafka = createKafka({ kafkaBrokers: [broker.brokers], kafkaClientId: 'rejoin-test' }, log);
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'rejoin', numPartitions: 3 }], waitForLeaders: true });
  await admin.disconnect();

  const consumer = kafka.consumer({ groupId: 'rejoin', sessionTimeout: 10_000, heartbeatInterval: 1000 });
  t.teardown(() => consumer.disconnect().catch(() => {}));
  const joins: string[] = [];
  let onJoin: () => void = () => {};
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    joins.push(e.payload.memberId);
    onJoin();
  });
  const nextJoin = () => new Promise<void>((resolve) => (onJoin = resolve));
  const first = nextJoin();
  await consumer.connect();
  await consumer.subscribe({ topic: 'rejoin', fromBeginning: true });
  await consumer.run({ eachMessage: async () => {} });
  await first;

  const again = nextJoin();
  broker.kill();
  await new Promise((r) => broker.process.once('exit', r));
  await new Promise((r) => setTimeout(r, 1500));
  broker = await startKafka({ dir, ...ports, log });
  await again;
  t.equal(joins.length, 2, 'joined, then joined again after the restart');
  t.equal(joins[1], joins[0], 'with the member id it had, so the coordinator does not wait for the old one');
});
