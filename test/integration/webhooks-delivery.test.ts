// Outbound webhooks end to end (CONTRACT "Webhooks to integrators"): an endpoint registered through the API,
// a click, lead, sale and refund through the tracking API, and every event they make arriving once, with a
// 2xx, at an HTTPS receiver that verifies each delivery with the npm `standardwebhooks` library. Then the
// endpoint's filters (events, programs), a test event, the delivery log, a second workspace's isolation, and
// a secret rotation: both signatures during the overlap, only the new one after it.
import t from 'tap';
import {
  createLink,
  createProgram,
  postJson,
  startServices,
  ownDatabase,
  waitFor,
} from '../helpers/stack.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { HOOKS_HOST, startReceiver, verify } from '../helpers/webhook-receiver.ts';
import type { Received } from '../helpers/webhook-receiver.ts';
import { Webhook } from 'standardwebhooks';
import { writeFileSync } from 'node:fs';

const db = await ownDatabase(t);
const sql = db.sql;
const receiver = await startReceiver(t);
const svc = await startServices(
  t,
  ['web', 'click-worker', 'attribution-worker', 'reversal-worker', 'outbox-relay', 'webhook-worker'],
  {
    ...db.env,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_RESOLVE: `${HOOKS_HOST}=127.0.0.1`,
    NODE_EXTRA_CA_CERTS: receiver.caFile!,
    WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s',
    OUTBOX_POLL_MS: '200',
    WEBHOOK_POLL_MS: '200',
  },
);
const url = (p: string) => `${svc.baseUrl}${p}`;

const owner = await signup(svc);
const auth = bearer(owner.session);
const program = await createProgram(sql, { workspaceId: owner.workspaceId });
await sql`update programs set commission = ${sql.json({ type: 'percentage', percent: 30 })} where id = ${program.id}`;
const link = await createLink(sql, program.id);
const quiet = await createProgram(sql, { workspaceId: owner.workspaceId });

const onPath = (path: string) => receiver.received.filter((r) => r.path === path);
const typesOf = (list: Received[], secret: string) => list.map((r) => verify(secret, r).type).sort();

async function register(body: Record<string, unknown>) {
  const r = await postJson(url('/api/advertiser/webhooks'), body, auth);
  if (r.status !== 201) throw new Error(`register: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data as {
    id: number;
    secret: string;
    status: string;
    events: string[];
    program_ids: number[] | null;
  };
}

t.test('a lifecycle: every event once, 2xx, verified by the standardwebhooks library', async (t) => {
  const all = await register({ url: `${receiver.url}/all`, description: 'everything' });
  t.match(all, { status: 'enabled', events: ['*'], program_ids: null });
  t.match(all.secret, /^whsec_[A-Za-z0-9+/]{32}$/, 'whsec_ and the base64 of 24 bytes');
  const salesOnly = await register({
    url: `${receiver.url}/sales`,
    events: ['sale.created', 'sale.refunded'],
    program_ids: [program.id],
  });
  const otherProgram = await register({ url: `${receiver.url}/quiet`, program_ids: [quiet.id] });

  const clicked = await postJson(url('/api/v1/track/click'), {
    affiliate_url: `https://shop.example/?aff=${link.shortLink}`,
  });
  const clickId = clicked.body.click_id as string;
  const customer = `cust-${Date.now()}`;
  const lead = await postJson(
    url('/api/v1/track/lead'),
    { click_id: clickId, customer_key: customer, email: 'buyer@example.com' },
    bearer(program.token),
  );
  t.equal(lead.status, 200, JSON.stringify(lead.body));
  const txn = `wh-${Date.now()}`;
  const sale = await postJson(
    url('/api/v1/track/sale'),
    { transaction_id: txn, amount_cents: 10_000, customer_key: customer },
    bearer(program.token),
  );
  t.equal(sale.status, 200, JSON.stringify(sale.body));
  const refund = await postJson(
    url('/api/v1/track/refund'),
    { transaction_id: txn, refund_amount_cents: 2_500, refund_reason: 'damaged' },
    bearer(program.token),
  );
  t.equal(refund.status, 200, JSON.stringify(refund.body));
  const test = await postJson(
    url('/api/v1/track/sale'),
    { transaction_id: `${txn}-test`, amount_cents: 500, additional_data: { test_mode: true } },
    bearer(program.token),
  );
  t.equal(test.status, 200, JSON.stringify(test.body));

  const expected = [
    'commission.created',
    'commission.updated',
    'lead.created',
    'sale.created',
    'sale.created',
    'sale.refunded',
  ];
  await waitFor('six events at /all', async () => onPath('/all').length >= 6, 60_000);
  await waitFor('three events at /sales', async () => onPath('/sales').length >= 3, 30_000);
  // Anything extra would have come by now as well: the same worker sends to all three.
  await new Promise((r) => setTimeout(r, 1000));
  t.same(typesOf(onPath('/all'), all.secret), expected, 'every event of the lifecycle, once each');
  t.same(typesOf(onPath('/sales'), salesOnly.secret), ['sale.created', 'sale.created', 'sale.refunded']);
  t.equal(onPath('/quiet').length, 0, "an endpoint for another program gets none of this program's events");
  t.ok(
    receiver.received.every((r) => r.acknowledged),
    'each answered 2xx',
  );
  const ids = onPath('/all').map((r) => r.headers['webhook-id']);
  t.equal(new Set(ids).size, ids.length, 'one webhook-id per (event, endpoint)');
  t.throws(() => verify(salesOnly.secret, onPath('/all')[0]!), 'another endpoint’s secret does not verify');

  const byType = (type: string) =>
    onPath('/all')
      .map((r) => verify(all.secret, r))
      .filter((b) => b.type === type);
  const saleId = sale.body.sale_id as number;
  const commissionId = sale.body.commission_id as number;
  const live = byType('sale.created').find((b) => b.data.is_test === false)!;
  t.match(live.data, {
    id: saleId,
    program_id: program.id,
    transaction_id: txn,
    amount_cents: 10_000,
    currency: 'USD',
    partner_id: link.partnerId,
    commission_id: commissionId,
    is_test: false,
  });
  t.type(live.data.updated_at, 'string');
  const testSale = byType('sale.created').find((b) => b.data.is_test === true)!;
  t.match(testSale.data, { transaction_id: `${txn}-test`, is_test: true, commission_id: null }, 'test mode');
  t.match(byType('commission.created')[0]!.data, {
    id: commissionId,
    status: 'pending',
    amount_cents: 3_000,
    sale_id: saleId,
    partner_id: link.partnerId,
    program_id: program.id,
  });
  t.match(byType('commission.updated')[0]!.data, {
    id: commissionId,
    status: 'refunded',
    deducted_cents: 750,
    refund_reason: 'damaged',
  });
  t.match(byType('sale.refunded')[0]!.data, {
    id: saleId,
    refund_amount_cents: 2_500,
    commission_status: 'refunded',
    deduction_cents: 750,
  });
  t.match(byType('lead.created')[0]!.data, {
    program_id: program.id,
    partner_id: link.partnerId,
    customer_key: customer,
    click_id: clickId,
    email: 'buyer@example.com',
    is_test: false,
  });
  for (const b of onPath('/all').map((r) => verify(all.secret, r))) {
    t.ok(!Number.isNaN(Date.parse(b.timestamp)), `${b.type}: timestamp`);
  }
  // docs/webhooks.md's example payloads are these: WEBHOOK_EXAMPLES=<file> writes them out.
  if (process.env.WEBHOOK_EXAMPLES) {
    const examples = onPath('/all').map((r) => ({ headers: r.headers, body: verify(all.secret, r) }));
    writeFileSync(process.env.WEBHOOK_EXAMPLES, JSON.stringify(examples, null, 2));
  }
  const first = onPath('/all')[0]!;
  t.match(first.headers['content-type'], /^application\/json/);
  t.match(first.headers['webhook-timestamp'], /^\d{10}$/);
  t.match(first.headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/, 'one signature');

  // The delivery log says the same.
  const log = await getJson(url(`/api/advertiser/webhooks/${all.id}/deliveries?pageSize=100`), auth);
  t.equal(log.status, 200);
  const rows = log.body.data as {
    status: string;
    attempts: number;
    webhook_id: string;
    last_status_code: number;
  }[];
  t.equal(rows.length, 6);
  t.ok(
    rows.every((r) => r.status === 'delivered' && r.attempts === 1 && r.last_status_code === 204),
    'delivered at the first attempt',
  );
  t.same(rows.map((r) => r.webhook_id).sort(), [...ids].sort(), 'the log shows the webhook-ids sent');
  t.same(
    (await getJson(url(`/api/advertiser/webhooks/${all.id}/deliveries?status=failed`), auth)).body.data,
    [],
  );
  void otherProgram;
});

t.test('a test event goes to the one endpoint, and the delivery log pages', async (t) => {
  const ep = await register({ url: `${receiver.url}/test-only`, events: ['payout.paid'] });
  const r = await postJson(url(`/api/advertiser/webhooks/${ep.id}/test`), {}, auth);
  t.equal(r.status, 202, JSON.stringify(r.body));
  await waitFor('the test event', async () => onPath('/test-only').length >= 1, 30_000);
  const body = verify(ep.secret, onPath('/test-only')[0]!);
  t.match(body, { type: 'webhook.test', data: { endpoint_id: ep.id, is_test: true } });
  t.equal(
    receiver.received.filter((x) => x.path !== '/test-only' && x.body.includes('"webhook.test"')).length,
    0,
    'not sent elsewhere',
  );
  // The receiver has the request before the worker records the answer (a batch after the response): the
  // log is read until it shows the attempt (a full run once read it still pending).
  const log = await waitFor('the test delivery recorded', async () => {
    const l = await getJson(url(`/api/advertiser/webhooks/${ep.id}/deliveries`), auth);
    return (l.body.data as { attempts: number }[])[0]?.attempts ? l : null;
  });
  t.match(log.body, {
    data: [{ type: 'webhook.test', status: 'delivered', attempts: 1 }],
    meta: { has_more: false },
  });
});

t.test('another workspace sees none of it', async (t) => {
  const stranger = await signup(svc);
  const [ep] = (await getJson(url('/api/advertiser/webhooks'), auth)).body.data as { id: number }[];
  const as = bearer(stranger.session);
  for (const [method, path] of [
    ['GET', `/api/advertiser/webhooks/${ep!.id}`],
    ['PUT', `/api/advertiser/webhooks/${ep!.id}`],
    ['DELETE', `/api/advertiser/webhooks/${ep!.id}`],
    ['POST', `/api/advertiser/webhooks/${ep!.id}/test`],
    ['POST', `/api/advertiser/webhooks/${ep!.id}/rotate-secret`],
    ['POST', `/api/advertiser/webhooks/${ep!.id}/enable`],
    ['GET', `/api/advertiser/webhooks/${ep!.id}/deliveries`],
  ] as const) {
    const r = method === 'GET' ? await getJson(url(path), as) : await send(method, url(path), {}, as);
    t.same([r.status, r.body], [404, { error: 'Webhook endpoint not found' }], `${method} ${path}`);
  }
  const [delivery] = (await getJson(url(`/api/advertiser/webhooks/${ep!.id}/deliveries`), auth)).body
    .data as {
    id: number;
  }[];
  for (const path of [`/api/advertiser/webhook-deliveries/${delivery!.id}`]) {
    t.same((await getJson(url(path), as)).body, { error: 'Webhook delivery not found' });
  }
  t.same((await send('POST', url(`/api/advertiser/webhook-deliveries/${delivery!.id}/retry`), {}, as)).body, {
    error: 'Webhook delivery not found',
  });
  t.same((await getJson(url('/api/advertiser/webhooks'), as)).body, { data: [] }, 'their own list is empty');
});

t.test('rotation: both secrets sign for the overlap, then only the new one', async (t) => {
  const ep = await register({ url: `${receiver.url}/rotate`, events: ['webhook.test'] });
  const rotated = await postJson(url(`/api/advertiser/webhooks/${ep.id}/rotate-secret`), {}, auth);
  t.equal(rotated.status, 200);
  const { secret: fresh, previous_secret_expires_at: until } = rotated.body.data as {
    secret: string;
    previous_secret_expires_at: string;
  };
  t.not(fresh, ep.secret);
  t.ok(Math.abs(Date.parse(until) - Date.now() - 24 * 3600_000) < 600_000, 'about 24 hours of overlap');
  await postJson(url(`/api/advertiser/webhooks/${ep.id}/test`), {}, auth);
  await waitFor('the test event', async () => onPath('/rotate').length >= 1, 30_000);
  const during = onPath('/rotate')[0]!;
  t.equal(during.headers['webhook-signature']!.split(' ').length, 2, 'two signatures');
  t.ok(verify(fresh, during), 'the new secret verifies');
  t.ok(verify(ep.secret, during), 'the old secret verifies too');

  // The overlap ends (moved into the past rather than waited for): only the new secret signs.
  await sql`update webhook_endpoints set previous_secret_expires_at = now() - interval '1 second' where id = ${ep.id}`;
  await postJson(url(`/api/advertiser/webhooks/${ep.id}/test`), {}, auth);
  await waitFor('the second test event', async () => onPath('/rotate').length >= 2, 30_000);
  const after = onPath('/rotate')[1]!;
  t.equal(after.headers['webhook-signature']!.split(' ').length, 1, 'one signature');
  t.ok(verify(fresh, after));
  t.throws(
    () => new Webhook(ep.secret).verify(after.body, after.headers as never),
    'the old secret no longer',
  );
  const read = await getJson(url(`/api/advertiser/webhooks/${ep.id}`), auth);
  t.match(read.body, { data: { previous_secret_expires_at: null } }, 'the overlap is over');
});
