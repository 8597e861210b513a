// The spec's refund notification reaches the partner by mail: click → sale → refund through the API, the
// reversal worker's notification effect (mail: true) stored by the notification worker (storeNotifications),
// which queues the mail in the same transaction; the relay and the mail worker deliver it to a real SMTP
// receiver. A redelivered effect is neither stored nor mailed twice.
import t from 'tap';
import { createLink, createProgram, postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { startSmtpSink } from '../helpers/smtp.ts';
import { connectProducer, createKafka } from '../../shared/pipeline/kafka.ts';
import { createLogger } from '../../shared/logger.ts';

const sql = testSql(t);
const sink = await startSmtpSink(t);
const svc = await startServices(
  t,
  [
    'web',
    'click-worker',
    'attribution-worker',
    'reversal-worker',
    'notification-worker',
    'outbox-relay',
    'mail-worker',
  ],
  { SMTP_URL: sink.url, MAIL_POLL_MS: '100' },
);
const url = (p: string) => `${svc.baseUrl}${p}`;

t.test('a refund mails the partner its notification, once', async (t) => {
  const program = await createProgram(sql);
  await sql`update programs set commission = ${sql.json({ type: 'percentage', percent: 30 })} where id = ${program.id}`;
  const link = await createLink(sql, program.id);
  const [partner] = await sql<{ email: string }[]>`select email from partners where id = ${link.partnerId}`;
  const auth = { authorization: `Bearer ${program.token}` };

  const click = await postJson(url('/api/v1/track/click'), {
    affiliate_url: `https://shop.example/?aff=${link.shortLink}`,
  });
  t.equal(click.status, 200);
  const transactionId = `txn-${Date.now()}`;
  const sale = await postJson(
    url('/api/v1/track/sale'),
    { transaction_id: transactionId, amount_cents: 10_000, click_id: click.body.click_id },
    auth,
  );
  t.equal(sale.status, 200, JSON.stringify(sale.body));
  const refund = await postJson(
    url('/api/v1/track/refund'),
    { transaction_id: transactionId, refund_reason: 'Changed <her> mind' },
    auth,
  );
  t.match(refund.body, { success: true, status: 'reversed' });

  const mail = await sink.waitForMail((m) => m.to.includes(partner!.email.toLowerCase()), 120_000);
  t.equal(mail.subject, 'A commission was reversed');
  t.match(mail.text, `A refund on sale ${transactionId} deducted 30.00 USD`);
  t.match(mail.text, 'Reason: Changed <her> mind');
  t.match(mail.html, 'Reason: Changed &lt;her&gt; mind', 'escaped in the HTML');
  t.ok(mail.links.includes(`${svc.baseUrl}/partner/notifications`), 'links to where it can be read');

  const [note] = await sql<{ id: string }[]>`
    select id from notifications where partner_id = ${link.partnerId} and kind = 'commission_reversed'`;
  t.equal(mail.headers['x-svc-mail-id'], `notification:${note!.id}`, 'the mail of that notification');
  // The same refund again: the reversal answers `skipped`; nothing new is stored or mailed. And the
  // effect of the first one, published again (a redelivery), is stored and mailed once.
  const again = await postJson(url('/api/v1/track/refund'), { transaction_id: transactionId }, auth);
  t.match(again.body, { status: 'skipped' });
  const [row] = await sql`select status, attempts from mail_log where id = ${`notification:${note!.id}`}`;
  t.match(row, { status: 'sent', attempts: 1 });
  const [count] = await sql<{ n: number }[]>`
    select count(*)::int as n from notifications where partner_id = ${link.partnerId}`;
  t.equal(count!.n, 1);
});

t.test('a redelivered notification effect is stored and mailed once', async (t) => {
  const program = await createProgram(sql);
  const link = await createLink(sql, program.id);
  const [partner] = await sql<{ email: string }[]>`select email from partners where id = ${link.partnerId}`;
  const kafka = createKafka(
    { kafkaBrokers: svc.env.KAFKA_BROKERS!.split(','), kafkaClientId: 'mail-refund-test' },
    createLogger('test', 'error'),
  );
  const producer = await connectProducer(kafka);
  t.teardown(() => producer.disconnect());
  const key = `test:${Date.now()}:refund:partner`;
  const effect = {
    topic: 'notifications',
    notification_key: key,
    recipient_type: 'partner',
    partner_id: link.partnerId,
    workspace_id: null,
    program_id: program.id,
    kind: 'commission_refunded',
    title: 'A commission was partly refunded',
    body: 'test',
    data: {},
    mail: true,
  };
  const value = JSON.stringify(effect);
  await producer.send({
    topic: `${svc.prefix}notifications`,
    messages: [
      { key: String(link.partnerId), value },
      { key: String(link.partnerId), value },
    ],
  });
  await sink.waitForMail((m) => m.to.includes(partner!.email.toLowerCase()), 120_000);
  // A sentinel behind them on the same partition: once it is mailed, both copies were applied.
  const sentinel = { ...effect, notification_key: `${key}:sentinel`, title: 'Sentinel' };
  await producer.send({
    topic: `${svc.prefix}notifications`,
    messages: [{ key: String(link.partnerId), value: JSON.stringify(sentinel) }],
  });
  await sink.waitForMail((m) => m.subject === 'Sentinel' && m.to.includes(partner!.email.toLowerCase()));
  const toPartner = sink.messages.filter(
    (m) => m.to.includes(partner!.email.toLowerCase()) && m.subject === effect.title,
  );
  t.equal(toPartner.length, 1, 'mailed once');
  const stored = await waitFor('stored', async () => {
    const r = await sql`select 1 from notifications where notification_key = ${key}`;
    return r.length > 0 ? r : null;
  });
  t.equal(stored.length, 1, 'stored once');
});
