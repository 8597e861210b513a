// The pipeline metrics on each process's /metrics, after a small known load: clicks (most of them hitting
// a cached link), leads, sales, one refund and one poison message. Counts are asserted, never times: the
// produce and pipeline-lag histograms count every message, consumer lag is reported per partition, the
// dead letter is counted by topic, step and reason, outcomes by kind, status and reason, and the link
// cache's hits and misses add up to the lookups.
import t from 'tap';
import { createKafka } from '../../shared/pipeline/kafka.ts';
import { topicName } from '../../shared/contracts/topics.ts';
import { createLogger } from '../../shared/logger.ts';
import { freePort } from '../../scripts/lib/stack/stack.ts';
import type { ServiceName } from '../../scripts/lib/stack/services.ts';
import {
  createLink,
  createProgram,
  postJson,
  stackEnv,
  startServices,
  testSql,
  waitFor,
} from '../helpers/stack.ts';

const sql = testSql(t);

/** The sum of the samples of `name` whose labels include `labels`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | null {
  let total: number | null = null;
  for (const line of text.split('\n')) {
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) total = (total ?? 0) + Number(m[3]);
  }
  return total;
}

t.test('every process reports its pipeline metrics with counts matching the load', async (t) => {
  const svc = await startServices(t, []);
  const ports = {} as Record<ServiceName, number>;
  const names: ServiceName[] = ['web', 'click-worker', 'attribution-worker', 'reversal-worker'];
  for (const name of names) {
    ports[name] = await freePort();
    svc.env.OPS_PORT = String(ports[name]);
    await svc.start(name);
  }
  const scrape = async (name: ServiceName) => (await fetch(`http://127.0.0.1:${ports[name]}/metrics`)).text();
  const program = await createProgram(sql);
  const links = await Promise.all([0, 1].map(() => createLink(sql, program.id)));
  const auth = { authorization: `Bearer ${program.token}` };

  const clickIds: string[] = [];
  for (let i = 0; i < 20; i++) {
    const r = await postJson(`${svc.baseUrl}/api/v1/track/click`, {
      affiliate_url: `https://m.example/?aff=${links[i % 2]!.shortLink}`,
    });
    t.equal(r.status, 200);
    clickIds.push(r.body.click_id as string);
  }
  await waitFor('the clicks stored', async () => {
    const [n] = await sql`select count(*)::int as n from customers where click_id = any(${clickIds})`;
    return n!.n === 20;
  });
  for (const c of clickIds.slice(0, 3)) {
    const r = await postJson(`${svc.baseUrl}/api/v1/track/lead`, { click_id: c, customer_key: `u-${c}` });
    t.equal(r.status, 200, 'lead');
  }
  const txns: string[] = [];
  for (const c of clickIds.slice(3, 6)) {
    const txn = `m-${c}`;
    txns.push(txn);
    const r = await postJson(
      `${svc.baseUrl}/api/v1/track/sale`,
      { transaction_id: txn, amount_cents: 1000, click_id: c },
      auth,
    );
    t.equal(r.status, 200, 'sale');
  }
  const refund = await postJson(`${svc.baseUrl}/api/v1/track/refund`, { transaction_id: txns[0] }, auth);
  t.equal(refund.status, 200, 'refund');

  const log = createLogger('test', 'warn');
  const kafka = createKafka(
    { kafkaBrokers: stackEnv().KAFKA_BROKERS.split(','), kafkaClientId: 'test' },
    log,
  );
  const producer = kafka.producer();
  await producer.connect();
  t.teardown(() => producer.disconnect());
  const clicks = topicName(svc.prefix, 'clicks');
  await producer.send({ topic: clicks, messages: [{ key: 'poison', value: '{not json' }] });
  await waitFor('the poison dead-lettered', async () => {
    const r = await sql`select 1 from dead_letters where source_topic = ${clicks}`;
    return r.length === 1;
  });

  // web: produce latency per topic, the link cache.
  const web = await scrape('web');
  t.ok(
    sample(web, 'svc_produce_seconds_count', { topic: clicks, result: 'ok' })! >= 23,
    'web: 20 clicks + 3 leads produced',
  );
  t.equal(
    sample(web, 'svc_produce_seconds_count', { topic: topicName(svc.prefix, 'sales'), result: 'ok' }),
    3,
  );
  t.equal(
    sample(web, 'svc_produce_seconds_count', { topic: topicName(svc.prefix, 'refunds'), result: 'ok' }),
    1,
  );
  t.match(web, /svc_produce_seconds_bucket\{[^}]*le="0.001"[^}]*\}/);
  const hits = sample(web, 'svc_link_cache_lookups_total', { result: 'hit' })!;
  const misses = sample(web, 'svc_link_cache_lookups_total', { result: 'miss' })!;
  t.ok(misses >= 2, `a miss per link at least (${misses})`);
  t.ok(hits >= 18, `the other clicks hit the cache (${hits})`);
  t.ok(hits + misses >= 20, 'at least one lookup per click (tokens are looked up there too)');

  // click worker: every message's accept→commit lag, consumer lag per partition, the dead letter, leads.
  await waitFor('the click worker to count the poison', async () => {
    const w = await scrape('click-worker');
    return sample(w, 'svc_pipeline_lag_seconds_count') === 24 ? w : null;
  });
  const cw = await scrape('click-worker');
  t.equal(sample(cw, 'svc_pipeline_lag_seconds_count'), 24, '20 clicks + 3 leads + 1 poison committed');
  t.equal(sample(cw, 'svc_messages_total'), 24);
  t.equal(sample(cw, 'svc_dead_letters_total', { topic: clicks, step: 'parse', reason: 'not JSON' }), 1);
  t.equal(sample(cw, 'svc_dead_letters_total'), 1, 'and no other dead letter');
  t.equal(sample(cw, 'svc_command_outcomes_total', { kind: 'lead', status: '200' }), 3, 'three leads');
  t.equal(sample(cw, 'svc_consumer_lag_messages', { topic: clicks }), 0, 'caught up on every partition');
  t.match(
    cw,
    new RegExp(`svc_consumer_lag_messages\\{topic="${clicks.replace(/\./g, '\\.')}",partition="\\d"`),
  );
  const dl = topicName(svc.prefix, 'deadLetter');
  t.ok(
    sample(cw, 'svc_produce_seconds_count', { topic: dl, result: 'ok' })! >= 1,
    'the dead letter produced',
  );
  t.ok(sample(cw, 'svc_chunk_messages_count')! >= 1, 'chunks counted');

  // attribution and reversal workers: outcomes by kind and status.
  const aw = await scrape('attribution-worker');
  t.equal(sample(aw, 'svc_command_outcomes_total', { kind: 'sale', status: '200' }), 3, 'three sales');
  t.equal(sample(aw, 'svc_pipeline_lag_seconds_count'), 3);
  const rw = await scrape('reversal-worker');
  t.equal(sample(rw, 'svc_command_outcomes_total', { kind: 'refund', status: '200' }), 1, 'one refund');
  t.match(
    rw,
    /svc_command_outcomes_total\{kind="refund",status="200",reason="[a-z_]+",process="reversal-worker"\} 1/,
  );
});
