// A sale already written to Kafka, waiting for its outcome, when the broker dies: no worker can fetch it
// or write its effects until Kafka is back, so waiting out the command deadline is pointless. The web
// process learns it from its producer (a send no longer acknowledged opens the circuit) and answers the
// waiting sale 503 "still being processed" then. The deadline here is 30 s and the partition has a live
// owner (a heartbeat as a worker writes it, for a worker that applies nothing), so an early 503 can come
// only from the circuit; the bound checked is far from both (a machine five times slower still passes).
import t from 'tap';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { STACK_DIR, freePort } from '../../scripts/lib/stack/stack.ts';
import { startKafka } from '../../scripts/lib/stack/kafka-server.ts';
import { createLogger } from '../../shared/logger.ts';
import { createKafka } from '../../shared/pipeline/kafka.ts';
import { startHeartbeat } from '../../shared/pipeline/liveness.ts';
import { topicName } from '../../shared/contracts/topics.ts';
import { createLink, createProgram, postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';

const DEADLINE_MS = 30_000;
const sql = testSql(t);
const log = createLogger('commands-broker-death-test', 'warn');

t.test('a sale waiting for its outcome is answered 503 once Kafka stops acknowledging', async (t) => {
  const dir = join(STACK_DIR, `broker-death-${process.pid}`);
  const ports = { port: await freePort(), controllerPort: await freePort() };
  const broker = await startKafka({ dir, ...ports, log });
  t.teardown(async () => {
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const svc = await startServices(t, ['web'], {
    KAFKA_BROKERS: broker.brokers,
    COMMAND_DEADLINE_MS: String(DEADLINE_MS),
  });
  const sales = topicName(svc.prefix, 'sales');
  // An attribution worker as the web process sees it: alive and owning every partition of the topic.
  const owner = startHeartbeat(sql, log, { group: `${svc.prefix}attribution-worker`, topic: sales });
  owner.set([0, 1, 2, 3, 4, 5]);
  t.teardown(() => owner.stop());

  const program = await createProgram(sql);
  const link = await createLink(sql, program.id);
  const click = await postJson(`${svc.baseUrl}/api/v1/track/click`, {
    affiliate_url: `https://x.example/?aff=${link.shortLink}`,
  });
  t.equal(click.status, 200, 'a click while the broker runs');

  const admin = createKafka(
    { kafkaBrokers: [broker.brokers], kafkaClientId: 'broker-death-test' },
    log,
  ).admin();
  await admin.connect();
  const written = async () => (await admin.fetchTopicOffsets(sales)).reduce((n, p) => n + Number(p.high), 0);
  // Read until the broker answers for every partition: just after its start a partition may still be
  // without a leader (NOT_LEADER_FOR_PARTITION, seen once in a full run), which fetchTopicOffsets does not retry.
  const before = (await waitFor('the sales topic offsets', async () => ({ n: await written() }), 30_000)).n;
  const sent = Date.now();
  const sale = fetch(`${svc.baseUrl}/api/v1/track/sale`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${program.token}`,
      'idempotency-key': 'broker-death-sale',
    },
    body: JSON.stringify({
      transaction_id: 'broker-death',
      amount_cents: 5000,
      click_id: click.body.click_id,
    }),
    signal: AbortSignal.timeout(DEADLINE_MS * 2),
  }).then(async (r) => ({
    status: r.status,
    retryAfter: r.headers.get('retry-after'),
    body: await r.json(),
  }));
  // The sale is in Kafka (acknowledged), so the web process now waits for its outcome.
  await waitFor('the sale written to its topic', async () => (await written()) > before, 60_000, 50);
  await admin.disconnect();

  broker.kill();
  if (broker.process.exitCode === null && broker.process.signalCode === null)
    await new Promise((r) => broker.process.once('exit', r));
  const killed = Date.now();
  // Any other send now goes unacknowledged (a click: its own answer is a 503 within PRODUCE_TIMEOUT_MS).
  const other = await postJson(`${svc.baseUrl}/api/v1/track/click`, {
    affiliate_url: `https://x.example/?aff=${link.shortLink}`,
  });
  t.equal(other.status, 503, 'a click after the broker died is refused');

  const answer = await sale;
  const after = Date.now() - killed;
  t.equal(answer.status, 503, `the waiting sale is answered 503: ${JSON.stringify(answer.body)}`);
  t.match(answer.body, { error: /still being processed/ });
  t.equal(answer.retryAfter, '2');
  t.ok(
    after < DEADLINE_MS / 2,
    `answered ${after} ms after the broker died, ${Date.now() - sent} ms after it was sent: long before the ${DEADLINE_MS} ms deadline`,
  );
});
