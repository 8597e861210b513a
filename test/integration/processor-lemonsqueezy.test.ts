// Lemon Squeezy end to end: events signed as Lemon Squeezy signs them (X-Signature over the body) through
// the intake and the processor worker; orders, the `initial` subscription payment that adds nothing,
// renewals, cumulative refunds, test mode; deduped on event name + object id + refunded amount.
import t from 'tap';
import { startServices, testSql } from '../helpers/stack.ts';
import { processorProgram } from '../helpers/processor-stack.ts';
import { lsEvent, lsOrder, lsSignature, lsSubscriptionInvoice } from '../helpers/processors.ts';
import { LEMONSQUEEZY_ERRORS, lemonSqueezyIdentity } from '../../shared/processors/lemonsqueezy.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'click-worker', 'processor-worker', 'ledger-worker']);
const SECRET = 'typed-in-ls';
const { program, customer, outcomeOf, salesOf, commission, post } = await processorProgram(
  sql,
  svc.baseUrl,
  'lemonsqueezy',
  SECRET,
);

async function send(
  name: string,
  data: unknown,
  meta: { custom_data?: Record<string, string>; test_mode?: boolean } = {},
) {
  const event = lsEvent(name, data, meta);
  const body = JSON.stringify(event);
  const res = await post(body, { 'x-signature': lsSignature(body, SECRET), 'x-event-name': name });
  if (res.status !== 200) throw new Error(`${name} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return { id: lemonSqueezyIdentity(event).event_id!, body };
}

let orderSeq = Date.now() % 1_000_000;
const orderId = () => String(++orderSeq);

t.test('an order: one sale, 10% of total; the same delivery again changes nothing', async (t) => {
  await customer('ls-buyer-1');
  const order = lsOrder({ total: 4_999, currency: 'usd', id: orderId() });
  const { id, body } = await send('order_created', order, {
    custom_data: { svc_customer_key: 'ls-buyer-1' },
  });
  t.equal(id, `order_created:${order.id}`);
  const row = await outcomeOf(id);
  t.match(row, { outcome: 'attributed', transaction_id: order.id });
  t.match((await salesOf(order.id))[0], { amount_cents: 4_999, is_test: false });
  t.match(await commission(row.commission_id), { amount_cents: 500 }, '10% of 49.99, currency in lower case');
  const again = await post(body, { 'x-signature': lsSignature(body, SECRET) });
  t.same(again, { status: 200, body: { received: true } });
  // Behind it on the order's key: a refund of nothing (ignored) tells the copy was consumed.
  const marker = await send('order_refunded', lsOrder({ total: 4_999, id: order.id }));
  t.match(await outcomeOf(marker.id), { outcome: 'ignored', reason: 'nothing_refunded' });
  t.equal((await salesOf(order.id)).length, 1, 'one sale');
  const [n] =
    await sql`select count(*)::int as n from processor_events where program_id = ${program.id} and event_id = ${id}`;
  t.equal(n!.n, 1, 'one outcome row');
});

t.test(
  'a subscription: initial adds nothing (links it), a renewal without custom data attributes',
  async (t) => {
    await customer('ls-sub-1');
    const subId = 9_000 + (orderSeq % 1000);
    const custom_data = { svc_customer_key: 'ls-sub-1' };
    const order = lsOrder({ total: 1_500, id: orderId() });
    t.match(await outcomeOf((await send('order_created', order, { custom_data })).id), {
      outcome: 'attributed',
    });
    const renewal = lsSubscriptionInvoice({
      subscription_id: subId,
      total: 1_500,
      billing_reason: 'renewal',
      id: orderId(),
    });
    const early = await send('subscription_payment_success', renewal);
    t.match(await outcomeOf(early.id), { outcome: 'waiting', reason: 'subscription_link' });
    const initial = lsSubscriptionInvoice({
      subscription_id: subId,
      total: 1_500,
      billing_reason: 'initial',
      id: orderId(),
    });
    t.match(await outcomeOf((await send('subscription_payment_success', initial, { custom_data })).id), {
      outcome: 'linked',
    });
    t.equal((await salesOf(`sinv_${initial.id}`)).length, 0, 'initial is the order already counted');
    const r = await outcomeOf(early.id, 'waiting');
    t.match(r, { outcome: 'attributed', transaction_id: `sinv_${renewal.id}` });
    t.match((await salesOf(`sinv_${renewal.id}`))[0], {
      amount_cents: 1_500,
      sale_type: 'subscription',
      is_recurring: true,
      subscription_id: String(subId),
    });
    t.match(await commission(r.commission_id), { amount_cents: 150 });
    const [all] = await sql`
    select coalesce(sum(amount_cents), 0)::int as cents from sales where program_id = ${program.id} and customer_key = 'ls-sub-1'`;
    t.equal(all!.cents, 3_000, 'the order and the renewal, not the initial payment twice');
  },
);

t.test('refunds: cumulative refunded_amount, partial then full of another; deduped per amount', async (t) => {
  await customer('ls-refund-1');
  const order = lsOrder({ total: 8_000, id: orderId() });
  const sale = await outcomeOf(
    (await send('order_created', order, { custom_data: { svc_customer_key: 'ls-refund-1' } })).id,
  );
  const partial = await send(
    'order_refunded',
    lsOrder({ total: 8_000, refunded_amount: 2_000, id: order.id }),
  );
  t.equal(partial.id, `order_refunded:${order.id}:2000`);
  t.match(await outcomeOf(partial.id), { outcome: 'refund_applied', reason: 'refunded' });
  t.match(await commission(sale.commission_id), {
    status: 'refunded',
    amount_cents: 800,
    deducted_cents: 200,
  });

  await customer('ls-refund-2');
  const order2 = lsOrder({ total: 3_000, id: orderId() });
  const sale2 = await outcomeOf(
    (await send('order_created', order2, { custom_data: { svc_customer_key: 'ls-refund-2' } })).id,
  );
  const full = await send('order_refunded', lsOrder({ total: 3_000, refunded_amount: 3_000, id: order2.id }));
  t.match(await outcomeOf(full.id), { outcome: 'refund_applied', reason: 'reversed' });
  t.match(await commission(sale2.commission_id), { status: 'reversed', deducted_cents: 300 });
});

t.test('a refund before its order waits; test mode records without commission', async (t) => {
  await customer('ls-early');
  const order = lsOrder({ total: 2_000, id: orderId() });
  const refund = await send('order_refunded', lsOrder({ total: 2_000, refunded_amount: 500, id: order.id }));
  t.match(await outcomeOf(refund.id), { outcome: 'waiting', reason: 'sale' });
  const sale = await outcomeOf(
    (await send('order_created', order, { custom_data: { svc_customer_key: 'ls-early' } })).id,
  );
  t.match(await outcomeOf(refund.id, 'waiting'), { outcome: 'refund_applied', reason: 'refunded' });
  t.match(await commission(sale.commission_id), { amount_cents: 200, deducted_cents: 50 });

  await customer('ls-tester');
  const testOrder = lsOrder({ total: 2_000, id: orderId() });
  const e = await send('order_created', testOrder, {
    custom_data: { svc_customer_key: 'ls-tester' },
    test_mode: true,
  });
  t.match(await outcomeOf(e.id), { outcome: 'recorded', reason: 'test_mode' });
  const [s] = await salesOf(testOrder.id);
  t.equal(s?.is_test, true, 'a test sale');
  const [c] = await sql`select count(*)::int as n from commissions where sale_id = ${s!.id}`;
  t.equal(c!.n, 0, 'no commission');
  const [ev] =
    await sql`select livemode from processor_events where program_id = ${program.id} and event_id = ${e.id}`;
  t.equal(ev!.livemode, false);
});

t.test('refusals: missing, malformed, wrong signature; not an event', async (t) => {
  const body = JSON.stringify(lsEvent('order_created', lsOrder({ total: 100 })));
  const bad = (status: number, error: string) => ({ status, body: { error } });
  t.same(await post(body, {}), bad(400, LEMONSQUEEZY_ERRORS.missingSignature));
  t.same(await post(body, { 'x-signature': 'sha256=abc' }), bad(400, LEMONSQUEEZY_ERRORS.malformedSignature));
  t.same(
    await post(body, { 'x-signature': lsSignature(body, 'another') }),
    bad(400, LEMONSQUEEZY_ERRORS.badSignature),
  );
  t.same(
    await post(`${body} `, { 'x-signature': lsSignature(body, SECRET) }),
    bad(400, LEMONSQUEEZY_ERRORS.badSignature),
    'one byte more than was signed',
  );
  const notEvent = JSON.stringify({ meta: {}, data: {} });
  t.same(
    await post(notEvent, { 'x-signature': lsSignature(notEvent, SECRET) }),
    bad(400, LEMONSQUEEZY_ERRORS.notEvent),
  );
  t.same(
    await post(body, { 'x-signature': lsSignature(body, SECRET) }, 999_999_999),
    bad(404, LEMONSQUEEZY_ERRORS.programNotFound),
  );
});
