// The answer channel under delay and failure: past the deadline the ingress answers 503 with Retry-After;
// a retry with the same Idempotency-Key resolves to the recorded outcome; without it a sale retry is a
// 409. A poison command is dead-lettered and its caller answered 500 with the kind's error string.
import t from 'tap';
import { createKafka } from '../../shared/pipeline/kafka.ts';
import { topicName } from '../../shared/contracts/topics.ts';
import { createLogger } from '../../shared/logger.ts';
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
const svc = await startServices(t, ['web', 'click-worker'], {
  COMMAND_DEADLINE_MS: '1500',
  OUTCOME_POLL_MS: '200',
});
const program = await createProgram(sql);
const link = await createLink(sql, program.id);
const auth = { authorization: `Bearer ${program.token}` };

t.test('503 + Retry-After while no worker answers; the retry gets the recorded outcome', async (t) => {
  const c = await postJson(`${svc.baseUrl}/api/v1/track/click`, {
    affiliate_url: `https://x.example/?aff=${link.shortLink}`,
  });
  const body = { transaction_id: `slow-${Date.now()}`, amount_cents: 2000, click_id: c.body.click_id };
  const first = await postJson(`${svc.baseUrl}/api/v1/track/sale`, body, {
    ...auth,
    'idempotency-key': 'k-1',
  });
  t.equal(first.status, 503);
  t.equal(first.headers.get('retry-after'), '2');
  t.match(first.body, { error: /still being processed/ });

  await svc.start('attribution-worker');
  const answered = await waitFor(
    'the queued sale to be applied',
    async () => {
      const r = await postJson(`${svc.baseUrl}/api/v1/track/sale`, body, {
        ...auth,
        'idempotency-key': 'k-1',
      });
      return r.status === 200 ? r : null;
    },
    60_000,
    500,
  );
  t.match(answered.body, { success: true, sale_id: Number, commission_id: Number });
  const again = await postJson(`${svc.baseUrl}/api/v1/track/sale`, body, {
    ...auth,
    'idempotency-key': 'k-1',
  });
  t.same(again.body, answered.body, 'the same key keeps answering the recorded outcome');
  const noKey = await postJson(`${svc.baseUrl}/api/v1/track/sale`, body, auth);
  t.equal(noKey.status, 409, 'a retry without the key resolves to 409');
  const [n] = await sql`select count(*)::int as n from sales where transaction_id = ${body.transaction_id}`;
  t.equal(n!.n, 1, 'recorded once');
});

t.test('a poison command is dead-lettered and its caller answered with the failure string', async (t) => {
  const log = createLogger('test', 'warn');
  const kafka = createKafka(
    { kafkaBrokers: stackEnv().KAFKA_BROKERS.split(','), kafkaClientId: 'test' },
    log,
  );
  const producer = kafka.producer();
  await producer.connect();
  t.teardown(() => producer.disconnect());
  const requestId = `poison-${Date.now()}`;
  await producer.send({
    topic: topicName(svc.prefix, 'sales'),
    messages: [
      {
        key: 'p',
        value: JSON.stringify({ v: 1, type: 'sale', request_id: requestId, ts: Date.now(), program_id: 'x' }),
      },
    ],
  });
  const outcome = await waitFor('the failure outcome', async () => {
    const [r] = await sql`select status_code, body from command_outcomes where request_id = ${requestId}`;
    return r;
  });
  t.same(outcome, { status_code: 500, body: { error: 'Sale tracking failed' } });
  // The answer commits with the chunk; the dead letter is written right after that commit.
  const dl = await waitFor('the dead letter', async () => {
    const [r] =
      await sql`select step, reason from dead_letters where source_topic = ${topicName(svc.prefix, 'sales')}`;
    return r;
  });
  t.same(dl, { step: 'parse', reason: 'bad program_id' });

  // A command whose identifier Postgres would alter (an unpaired surrogate, stored as U+FFFD) from a
  // producer other than the ingress: refused as poison, not applied with an id it cannot match again.
  const loneId = `poison-lone-${Date.now()}`;
  await producer.send({
    topic: topicName(svc.prefix, 'sales'),
    messages: [
      {
        key: 'p',
        value: JSON.stringify({
          v: 1,
          type: 'sale',
          request_id: loneId,
          ts: Date.now(),
          program_id: program.id,
          transaction_id: 'lone-\ud800',
          amount_cents: 100,
          currency: 'USD',
          customer_key: 'k',
          click_id: null,
        }),
      },
    ],
  });
  const loneOutcome = await waitFor('the lone-surrogate outcome', async () => {
    const [r] = await sql`select status_code, body from command_outcomes where request_id = ${loneId}`;
    return r;
  });
  t.same(loneOutcome, { status_code: 500, body: { error: 'Sale tracking failed' } });
  // Written after the chunk's commit, like the first one.
  const loneDl = await waitFor('the dead letter', async () => {
    const [r] = await sql`
      select reason from dead_letters where source_topic = ${topicName(svc.prefix, 'sales')} and reason like 'a string%'`;
    return r;
  });
  t.same(loneDl, { reason: 'a string holds a NUL or an unpaired surrogate' });

  // Nested deeper than any body the ingress accepts: dead-lettered (it used to overflow the worker's
  // stack, which crashed and restarted it forever on the same message).
  const deepId = `poison-deep-${Date.now()}`;
  let deep: unknown = 1;
  for (let i = 0; i < 3000; i++) deep = { a: deep };
  await producer.send({
    topic: topicName(svc.prefix, 'sales'),
    messages: [
      {
        key: 'p',
        value: JSON.stringify({ v: 1, type: 'sale', request_id: deepId, ts: Date.now(), line_items: deep }),
      },
    ],
  });
  const deepOutcome = await waitFor('the deep outcome', async () => {
    const [r] = await sql`select status_code, body from command_outcomes where request_id = ${deepId}`;
    return r;
  });
  t.same(deepOutcome, { status_code: 500, body: { error: 'Sale tracking failed' } });
  // Written after the chunk's commit, like the first one.
  const deepDl = await waitFor('the dead letter', async () => {
    const [r] = await sql`
      select reason from dead_letters where source_topic = ${topicName(svc.prefix, 'sales')} and reason like 'nested%'`;
    return r;
  });
  t.same(deepDl, { reason: 'nested deeper than 64 levels' });
});

t.test(
  'a commission that cannot be created leaves the sale recorded and its transaction_id consumed',
  async (t) => {
    // A trigger that refuses one commission amount stands in for a failure after the sale is stored.
    await sql.unsafe(`
    create or replace function refuse_commission() returns trigger language plpgsql as $$
    begin raise exception 'commission refused for the test'; end $$;
    drop trigger if exists refuse_commission on commissions;
    create trigger refuse_commission before insert on commissions
      for each row when (new.amount_cents = 4321 and new.program_id = ${program.id}) execute function refuse_commission();`);
    t.teardown(() => sql.unsafe('drop trigger if exists refuse_commission on commissions'));
    await sql`update programs set commission = ${sql.json({ type: 'flat', amount_cents: 4321 })} where id = ${program.id}`;
    const c = await postJson(`${svc.baseUrl}/api/v1/track/click`, {
      affiliate_url: `https://x.example/?aff=${link.shortLink}`,
    });
    const body = { transaction_id: `nocomm-${Date.now()}`, amount_cents: 10_000, click_id: c.body.click_id };
    // This file's deadline is 1.5 s: on a busy machine an answer may come later, as a 503 "still being
    // processed". A client then retries (the first request with its Idempotency-Key gets the recorded outcome).
    const answered = (headers: Record<string, string>) =>
      waitFor(
        'an answer other than 503',
        async () => {
          const res = await postJson(`${svc.baseUrl}/api/v1/track/sale`, body, headers);
          return res.status === 503 ? null : res;
        },
        60_000,
        500,
      );
    const r = await answered({ ...auth, 'idempotency-key': `nocomm-${body.transaction_id}` });
    t.equal(r.status, 500);
    t.same(r.body, { error: 'Failed to create commission' });
    const [s] = await sql`select count(*)::int as n from sales where transaction_id = ${body.transaction_id}`;
    t.equal(s!.n, 1, 'the sale is stored');
    const retry = await answered(auth);
    t.equal(retry.status, 409, 'the transaction_id stays consumed');
  },
);
