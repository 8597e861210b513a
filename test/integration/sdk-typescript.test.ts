// The TypeScript SDK (sdk/typescript) against the real service: the four tracking calls end to end, a
// duplicate sale, a replay under one Idempotency-Key, a refund, management and dashboard calls, and the
// retries that matter: a sale answered 503 by a proxy, and a sale and a click whose connection was dropped
// after the service had recorded them. Each is recorded once, and every attempt carried the same key.
import t from 'tap';
import { Svc, SvcError } from '../../sdk/typescript/src/index.ts';
import type { Test } from 'tap';
import type { SaleResult } from '../../sdk/typescript/src/index.ts';
import { IPHONE_UA, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { sdkProgram } from '../helpers/sdk-program.ts';
import { flakyProxy } from '../helpers/flaky-proxy.ts';
import { buildOpenApiDocument } from '../../scripts/lib/openapi.ts';

const sql = testSql(t);
const svc = await startServices(t, [
  'web',
  'click-worker',
  'attribution-worker',
  'reversal-worker',
  'ledger-worker',
  'notification-worker',
  'outbox-relay',
]);
const fx = await sdkProgram(svc, 'sdk');
const { run, programId, partnerId, trackingToken, affiliateUrl } = fx;
const session = new Svc({ baseUrl: svc.baseUrl, token: fx.session });
const admin = new Svc({ baseUrl: svc.baseUrl, token: fx.apiKey });
const tracking = new Svc({ baseUrl: svc.baseUrl, token: trackingToken });

async function rejection(p: Promise<unknown>): Promise<SvcError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof SvcError) return err;
    throw err;
  }
  throw new Error('resolved, but should have rejected');
}

/** The sale a call recorded (a duplicate answer here is a failure). */
function recorded(sale: SaleResult) {
  if (sale.duplicate) throw new Error(`unexpected duplicate: ${JSON.stringify(sale)}`);
  return sale;
}

const salesOf = async (transactionId: string) =>
  sql<{ id: string; amount_cents: string }[]>`
    select id, amount_cents from sales where transaction_id = ${transactionId}`;

t.test('click, lead, sale and refund end to end, as an integrator writes them', async (t) => {
  const click = await tracking.track.click({ affiliate_url: affiliateUrl, user_agent: IPHONE_UA });
  t.match(click, {
    success: true,
    click_id: /^cust_\d+_\d+$/,
    partner_code: `sdk-${run}`,
    cookie_window_days: 60,
  });
  const clickId = click.click_id!;

  const lead = await tracking.track.lead({
    click_id: clickId,
    customer_key: `user-${run}`,
    email: 'ada@example.com',
  });
  t.same(lead, { success: true, message: 'Lead recorded' });

  const transactionId = `order-${run}-1`;
  const sale = recorded(
    await tracking.track.sale({
      transaction_id: transactionId,
      amount_cents: 4900,
      customer_key: `user-${run}`,
    }),
  );
  t.match(sale, { success: true, sale_id: Number, commission_id: Number, message: String });
  t.equal(sale.duplicate, undefined);
  const rows = await salesOf(transactionId);
  t.equal(rows.length, 1);
  t.equal(Number(rows[0]!.id), sale.sale_id);

  const again = await tracking.track.sale({
    transaction_id: transactionId,
    amount_cents: 4900,
    customer_key: `user-${run}`,
  });
  t.same(again, {
    duplicate: true,
    error: 'Duplicate transaction_id. This sale has already been recorded.',
    message: 'Duplicate transaction_id. This sale has already been recorded.',
    statusCode: 409,
  });
  t.equal((await salesOf(transactionId)).length, 1, 'still one sale');

  // A partner code alone (docs/codes.md): a new customer, attributed by the code.
  const coded = recorded(
    await tracking.track.sale({
      transaction_id: `order-${run}-code`,
      amount_cents: 2000,
      customer_key: `coded-${run}`,
      coupon_code: fx.couponCode.toLowerCase(),
    }),
  );
  t.match(coded, { success: true, commission_id: Number });
  const [codedRow] = await sql<{ coupon_code: string; partner_id: string }[]>`
    select coupon_code, partner_id from sales where transaction_id = ${`order-${run}-code`}`;
  t.match(codedRow, { coupon_code: fx.couponCode, partner_id: String(fx.partnerId) });

  const refund = await tracking.track.refund({
    transaction_id: transactionId,
    refund_amount_cents: 2450,
    refund_reason: 'half returned',
  });
  t.same(refund, {
    success: true,
    status: 'refunded',
    deductionAmount: 7.35,
    commission_id: sale.commission_id,
  });

  const commissions = await admin.commissions.list(programId, { status: 'refunded' });
  t.match(
    commissions.data.find((c) => c.id === sale.commission_id),
    {
      status: 'refunded',
      amount_cents: 1470,
      currency: 'USD',
      partner_id: partnerId,
      refund_reason: 'half returned',
    },
    'the management API sees the refunded commission',
  );
});

t.test('one Idempotency-Key, two calls: the second gets the recorded answer', async (t) => {
  const idempotencyKey = `key-${run}-replay`;
  const click = await tracking.track.click({ affiliate_url: affiliateUrl });
  const input = {
    transaction_id: `order-${run}-replay`,
    amount_cents: 1000,
    click_id: click.click_id!,
  };
  const first = await tracking.track.sale(input, { idempotencyKey });
  const second = await tracking.track.sale(input, { idempotencyKey });
  t.same(second, first, 'the same answer, not a 409');
  t.equal((await salesOf(input.transaction_id)).length, 1);
  const reused = await rejection(tracking.track.sale({ ...input, amount_cents: 1001 }, { idempotencyKey }));
  t.match(reused, {
    status: 409,
    error: 'Idempotency-Key was used with a different request',
    idempotencyKey,
  });
});

t.test('errors reject with SvcError carrying the status and the spec string', async (t) => {
  const bad = await rejection(tracking.track.sale({ transaction_id: `order-${run}-bad`, amount_cents: 0 }));
  t.match(bad, { status: 400, error: 'amount_cents is required and must be a positive integer' });
  t.same(bad.body, { error: 'amount_cents is required and must be a positive integer' });
  const wrong = new Svc({ baseUrl: svc.baseUrl, token: 'aff_not_a_token' });
  t.match(await rejection(wrong.track.refund({ transaction_id: 'x' })), {
    status: 401,
    error: 'Invalid tracking token',
  });
  t.match(await rejection(tracking.track.refund({ transaction_id: `order-${run}-none` })), {
    status: 404,
    error: 'Sale not found for transaction_id',
  });
  const inactive = await admin.links.create(programId, partnerId);
  await admin.links.update(programId, partnerId, inactive.data.id, { status: 'inactive' });
  t.same(
    await tracking.track.click({ affiliate_url: `https://shop.example/?aff=${inactive.data.short_link}` }),
    { success: false, error: 'Referral link is inactive' },
    'an inactive link resolves (200, success false)',
  );
});

t.test('management and dashboard reads', async (t) => {
  const programs = await admin.programs.list();
  t.ok(programs.data.some((p) => p.id === programId && p.status === 'live'));
  t.match(await admin.programs.get(programId), { data: { id: programId, api_token_masked: String } });
  const partners = await admin.partners.list(programId);
  t.match(
    partners.data.find((p) => p.id === partnerId),
    { name: 'Ada', status: 'approved' },
  );
  t.match(await admin.links.list(programId, partnerId), { data: [{ short_link: `sdk-${run}` }] });
  const dashboardWithKey = await rejection(admin.dashboard.status(programId));
  t.equal(dashboardWithKey.status, 401, 'the dashboard reads need a session');
  t.match(await session.dashboard.status(programId), {
    data: { programId: String(programId), hasPartners: true },
  });
  const events = await session.dashboard.events(programId, { eventType: 'conversion', pageSize: 100 });
  t.ok(
    events.data!.some((e) => e.processor_event_id === `order-${run}-1`),
    'the sale is in the events list',
  );
  const perf = await session.dashboard.performance(programId, { period: '7d' });
  t.equal(perf.data!.length, 7);
  const [sales] = await sql<{ n: number }[]>`
    select count(*)::int as n from sales where program_id = ${programId} and not is_test`;
  t.equal(perf.metrics!.totalSales, sales!.n, 'totalSales counts the sales recorded');
  t.ok(sales!.n >= 1);
});

t.test('rewards: groups, a partner placed and its own policy, the ladder, bonuses, a discount', async (t) => {
  const group = await admin.rewards.createGroup(programId, {
    name: `SDK ${run}`,
    commission: { type: 'percentage', percent: 35 },
    discount: { type: 'percentage', percent: 10, duration: 'once', processor_ids: { stripe: 'promo_sdk' } },
  });
  t.match(group.data, { name: `SDK ${run}`, commission: { percent: 35 }, is_default: false });
  const groups = await admin.rewards.groups(programId);
  const dflt = groups.data.find((g) => g.is_default)!;
  t.match(await admin.rewards.placePartner(programId, partnerId, { group_id: group.data.id, locked: true }), {
    data: { group: { id: group.data.id }, group_locked: true },
  });
  t.match(
    await admin.rewards.setPartnerCommission(programId, partnerId, {
      commission: { type: 'flat', amount_cents: 9 },
    }),
    { data: { commission_override: { type: 'flat', amount_cents: 9 } } },
  );
  await admin.rewards.setPartnerCommission(programId, partnerId, { commission: null });
  const rules = await admin.rewards.setTierRules(programId, [
    {
      from_group_id: dflt.id,
      to_group_id: group.data.id,
      metric: 'sales_cents',
      window: 'lifetime',
      threshold: 1_000_000,
    },
  ]);
  t.match(await admin.rewards.tierRules(programId), {
    data: [{ id: rules.data[0]!.id, carry_existing_customers: true }],
  });
  await admin.rewards.setTierRules(programId, []);
  const bonus = await admin.rewards.createBonus(programId, {
    name: 'SDK bonus',
    metric: 'customers',
    threshold: 100,
    amount_cents: 100,
    period: 'once',
    ends_at: new Date(Date.now() + 86_400_000).toISOString(),
  });
  t.match(await admin.rewards.bonuses(programId), { data: [{ id: bonus.data.id, awarded: 0 }] });
  await admin.rewards.deleteBonus(programId, bonus.data.id);
  t.same(await tracking.track.discount(`nobody-${run}`), { data: null });
  await admin.rewards.placePartner(programId, partnerId, { group_id: dflt.id, locked: false });
  await admin.rewards.deleteGroup(programId, group.data.id);
});

t.test(
  'a sale answered 503 by a proxy: retried after Retry-After with the same key, recorded once',
  async (t) => {
    const proxy = await flakyProxy(
      t,
      svc.baseUrl,
      '503',
      (m, p) => m === 'POST' && p === '/api/v1/track/sale',
    );
    const client = new Svc({ baseUrl: proxy.url, token: trackingToken });
    const click = await client.track.click({ affiliate_url: affiliateUrl });
    const transactionId = `order-${run}-503`;
    const sale = await client.track.sale({
      transaction_id: transactionId,
      amount_cents: 2500,
      click_id: click.click_id!,
    });
    t.match(sale, { success: true, sale_id: Number });
    await assertOneSaleTwoAttempts(t, proxy.seen, transactionId, '503');
  },
);

t.test(
  'a sale whose connection dropped after it was recorded: the retry gets the recorded answer',
  async (t) => {
    const proxy = await flakyProxy(
      t,
      svc.baseUrl,
      'drop',
      (m, p) => m === 'POST' && p === '/api/v1/track/sale',
    );
    const client = new Svc({ baseUrl: proxy.url, token: trackingToken });
    const click = await client.track.click({ affiliate_url: affiliateUrl });
    const transactionId = `order-${run}-drop`;
    const sale = recorded(
      await client.track.sale({
        transaction_id: transactionId,
        amount_cents: 3100,
        click_id: click.click_id,
      }),
    );
    t.match(
      sale,
      { success: true, sale_id: Number, commission_id: Number },
      'not a 409: the recorded answer',
    );
    const rows = await assertOneSaleTwoAttempts(t, proxy.seen, transactionId, 'dropped');
    t.equal(Number(rows[0]!.id), sale.sale_id);
  },
);

t.test('a click whose connection dropped after it was accepted: one click_id, stored once', async (t) => {
  const proxy = await flakyProxy(
    t,
    svc.baseUrl,
    'drop',
    (m, p) => m === 'POST' && p === '/api/v1/track/click',
  );
  const client = new Svc({ baseUrl: proxy.url });
  const pageTitle = `dropped-${run}`;
  const click = await client.track.click({ affiliate_url: affiliateUrl, page_title: pageTitle });
  t.equal(click.success, true);
  const attempts = proxy.seen.filter((r) => r.path === '/api/v1/track/click');
  t.equal(attempts[0]?.fate, 'dropped');
  t.ok(attempts.length >= 2, `retried (${attempts.length} attempts)`);
  const ids = attempts.map((r) => (JSON.parse(r.body) as { event_id: string }).event_id);
  t.ok(
    ids.every((id) => id === ids[0]),
    'every attempt carried the same event_id',
  );
  // A marker click on the same click id lands behind both attempts (same Kafka key, same partition).
  await tracking.track.click({
    affiliate_url: affiliateUrl,
    existing_click_id: click.click_id,
    page_title: `marker-${run}`,
  });
  await waitFor('the marker click stored', async () => {
    const [r] = await sql<{ n: number }[]>`
      select count(*)::int as n from click_events where page_title = ${`marker-${run}`}`;
    return r!.n === 1;
  });
  const stored = await sql<{ click_id: string }[]>`
    select click_id from click_events where page_title = ${pageTitle}`;
  t.same(stored, [{ click_id: click.click_id }], 'stored once, with the click_id the caller got');
});

/**
 * The spoiled attempt, then the retries (one, or more when the loaded service itself answered 503), all
 * with the same Idempotency-Key and body; one sale recorded.
 */
async function assertOneSaleTwoAttempts(
  t: Test,
  seen: { path: string; headers: Record<string, unknown>; body: string; fate: string }[],
  transactionId: string,
  spoiled: string,
) {
  const attempts = seen.filter((r) => r.path === '/api/v1/track/sale');
  t.equal(attempts[0]?.fate, spoiled, 'the first attempt was spoiled');
  t.ok(attempts.length >= 2, `retried (${attempts.length} attempts)`);
  t.ok(attempts.slice(1).every((r) => r.fate === 'passed'));
  const key = attempts[0]?.headers['idempotency-key'];
  t.type(key, 'string');
  t.ok(
    attempts.every((r) => r.headers['idempotency-key'] === key),
    'every attempt carried the same Idempotency-Key',
  );
  t.ok(
    attempts.every((r) => r.body === attempts[0]!.body),
    'and the same body',
  );
  const rows = await salesOf(transactionId);
  t.equal(rows.length, 1, 'one sale recorded');
  return rows;
}

t.test("the offline OpenAPI build (npm run sdk:types) is the service's own document", async (t) => {
  const live = (await (await fetch(`${svc.baseUrl}/api/v1/openapi.json`)).json()) as unknown;
  t.same(await buildOpenApiDocument(), live);
});

t.test(
  'a real outbound webhook delivery verifies with verifyWebhook',
  { todo: 'waits for issue 19 (webhooks to integrators)' },
  async () => {
    // Once the webhooks branch has landed: start a local receiver, register it with
    // admin.webhooks.create({ url }) (the test services with WEBHOOK_ALLOW_PRIVATE=true), record a sale,
    // and check that verifyWebhook(rawBody, req.headers, secret) accepts the delivered sale.created event
    // and refuses it with another secret. Until then test/unit/sdk-webhooks.test.ts verifies signatures made
    // by the standardwebhooks library.
  },
);
