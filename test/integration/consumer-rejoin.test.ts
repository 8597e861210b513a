// After a broker kill -9 and restart, a consumer is still the member it was (kafkajs needed a fix for this:
// it crashed and rejoined as a new member). As a new member it would wait for the old one's session to
// expire, 10 s after the broker's return, before it is given partitions again. The member id is what is
// asserted, not a time.
import t from 'tap';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { STACK_DIR, freePort } from '../../scripts/lib/stack.ts';
import { startKafka } from '../../scripts/lib/kafka-server.ts';
import { createLogger } from '../../shared/logger.ts';
import { Consumer, MessagesStreamModes } from '@platformatic/kafka';
import { createKafka } from '../../shared/pipeline/kafka.ts';
import { waitFor } from '../helpers/stack.ts';

const log = createLogger('consumer-rejoin-test', 'warn');
/** A generous bound on each wait, so that a join that never comes fails the test instead of hanging it. */
const JOIN_WAIT_MS = 180_000;

t.test('a consumer rejoins as the same member after a broker restart', async (t) => {
  const dir = join(STACK_DIR, `rejoin-${process.pid}`);
  const ports = { port: await freePort(), controllerPort: await freePort() };
  let broker = await startKafka({ dir, ...ports, log });
  const kafka = createKafka({ kafkaBrokers: [broker.brokers], kafkaClientId: 'rejoin-test' }, log);
  // The settings runBatchConsumer gives its consumers (kafka-consumer.ts), a member id seen at each join.
  const consumer = new Consumer({
    ...kafka.options(),
    groupId: 'rejoin',
    sessionTimeout: 10_000,
    heartbeatInterval: 1000,
    autocommit: false,
  });
  consumer.on('error', () => {});
  const admin = kafka.admin();
  t.teardown(async () => {
    await consumer.close(true).catch(() => {});
    await admin.disconnect().catch(() => {});
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  });
  await admin.createTopics({ topics: [{ topic: 'rejoin', numPartitions: 3 }], waitForLeaders: true });

  const joins: string[] = [];
  let onJoin: () => void = () => {};
  consumer.on('consumer:group:join', (e: { memberId: string }) => {
    joins.push(e.memberId);
    onJoin();
  });
  const nextJoin = (what: string) => {
    const count = joins.length;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${what} within ${JOIN_WAIT_MS} ms`)), JOIN_WAIT_MS);
      onJoin = () => {
        if (joins.length === count) return;
        clearTimeout(timer);
        resolve();
      };
    });
  };
  const first = nextJoin('first join');
  const stream = await consumer.consume({
    topics: ['rejoin'],
    mode: MessagesStreamModes.EARLIEST,
    autocommit: false,
  });
  stream.on('data', () => {});
  stream.on('error', () => {});
  await first;

  broker.kill();
  await new Promise((r) => broker.process.once('exit', r));
  await new Promise((r) => setTimeout(r, 1500));
  broker = await startKafka({ dir, ...ports, log });
  // Either the member never left (its heartbeats reach the restarted coordinator, which loaded the group
  // with its members) or it joins again: in both cases with the id it had, never as a new member that
  // waits for the old one's session to expire.
  await waitFor(
    'a heartbeat answered by the restarted broker',
    async () => (consumer.lastHeartbeat?.getTime() ?? 0) > Date.now() - 3_000 && consumer.isActive(),
    JOIN_WAIT_MS,
    200,
  );
  t.ok(joins.length >= 1, 'joined');
  t.same(
    new Set(joins).size,
    1,
    'every join with the member id it had, so the coordinator waits for no old one',
  );
  t.equal(consumer.memberId, joins[0], 'still that member after the restart');
});
