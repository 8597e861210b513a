// After a broker kill -9 and restart, a consumer rejoins its group as the member it was (the kafkajs fix in
// patches/kafkajs+2.2.4.patch). As a new member it would wait for the old one's session to expire, 10 s after
// the broker's return, before it is given partitions again. The member id is what is asserted, not a time.
import t from 'tap';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { STACK_DIR, freePort } from '../../scripts/lib/stack.ts';
import { startKafka } from '../../scripts/lib/kafka-server.ts';
import { createLogger } from '../../shared/logger.ts';
import { createKafka } from '../../shared/pipeline/kafka.ts';

const log = createLogger('consumer-rejoin-test', 'warn');
/** A generous bound on each wait, so that a join that never comes fails the test instead of hanging it. */
const JOIN_WAIT_MS = 180_000;

t.test('a consumer rejoins as the same member after a broker restart', async (t) => {
  const dir = join(STACK_DIR, `rejoin-${process.pid}`);
  const ports = { port: await freePort(), controllerPort: await freePort() };
  let broker = await startKafka({ dir, ...ports, log });
  const kafka = createKafka({ kafkaBrokers: [broker.brokers], kafkaClientId: 'rejoin-test' }, log);
  // As runBatchConsumer does: no restart after disconnect(). A fetch failing as disconnect closes the
  // connections crashes the consumer, and kafkajs would start it again, for ever: that kept this test's
  // process alive until tap's timeout.
  let stopping = false;
  const consumer = kafka.consumer({
    groupId: 'rejoin',
    sessionTimeout: 10_000,
    heartbeatInterval: 1000,
    retry: { retries: 5, restartOnFailure: async () => !stopping },
  });
  t.teardown(async () => {
    stopping = true;
    await consumer.disconnect().catch(() => {});
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'rejoin', numPartitions: 3 }], waitForLeaders: true });
  await admin.disconnect();

  const joins: string[] = [];
  const gaveUp: string[] = [];
  let onJoin: () => void = () => {};
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    joins.push(e.payload.memberId);
    onJoin();
  });
  // kafkajs does not restart after a crash it deems final: the join would then never come.
  consumer.on(consumer.events.CRASH, (e) => {
    if (!e.payload.restart) {
      gaveUp.push(String(e.payload.error));
      onJoin();
    }
  });
  const nextJoin = (what: string) => {
    const count = joins.length;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${what} within ${JOIN_WAIT_MS} ms`)), JOIN_WAIT_MS);
      onJoin = () => {
        if (joins.length === count && gaveUp.length === 0) return;
        clearTimeout(timer);
        if (gaveUp.length > 0) reject(new Error(`the consumer gave up: ${gaveUp.join('; ')}`));
        else resolve();
      };
    });
  };
  const first = nextJoin('first join');
  await consumer.connect();
  await consumer.subscribe({ topic: 'rejoin', fromBeginning: true });
  await consumer.run({ eachMessage: async () => {} });
  await first;

  const again = nextJoin('join after the restart');
  broker.kill();
  await new Promise((r) => broker.process.once('exit', r));
  await new Promise((r) => setTimeout(r, 1500));
  broker = await startKafka({ dir, ...ports, log });
  await again;
  t.equal(joins.length, 2, 'joined, then joined again after the restart');
  t.equal(joins[1], joins[0], 'with the member id it had, so the coordinator does not wait for the old one');
});
