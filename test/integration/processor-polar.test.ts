// Polar end to end: Standard Webhooks signatures (either key derivation) through the intake and the
// processor worker; orders with tax, subscription renewals, refunds with their tax apart, out of order,
// duplicated (the webhook-id), badly signed.
import t from 'tap';
import { startServices, testSql } from '../helpers/stack.ts';
import { processorProgram } from '../helpers/processor-stack.ts';
import { polarEvent, polarHeaders, polarOrder } from '../helpers/processors.ts';
import { POLAR_ERRORS } from '../../shared/processors/polar.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'click-worker', 'processor-worker', 'ledger-worker']);
const SECRET = `whsec_${Buffer.from('polar-integration-secret-bytes!!').toString('base64')}`;
const { program, customer, outcomeOf, salesOf, commission, post } = await processorProgram(
  sql,
  svc.baseUrl,
  'polar',
  SECRET,
);

async function send(type: string, data: unknown, derivation: 'spec' | 'legacy' = 'spec') {
  const body = JSON.stringify(polarEvent(type, data));
  const headers = polarHeaders(body, SECRET, { derivation });
  const res = await post(body, headers);
  if (res.status !== 200) throw new Error(`${type} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return { id: headers['webhook-id']!, body, headers };
}

t.test(
  'an order: total_amount (net + tax) is the sale; the same webhook-id again changes nothing',
  async (t) => {
    await customer('po-buyer-1');
    const order = polarOrder({
      net_amount: 10_000,
      tax_amount: 1_999,
      metadata: { svc_customer_key: 'po-buyer-1' },
    });
    const { id, body, headers } = await send('order.paid', order);
    const row = await outcomeOf(id);
    t.match(row, { outcome: 'attributed', transaction_id: order.id });
    t.match((await salesOf(order.id))[0], { amount_cents: 11_999 });
    t.match(await commission(row.commission_id), { amount_cents: 1_200 });
    t.same(await post(body, headers), { status: 200, body: { received: true } }, 'redelivered');
    const marker = await send('order.paid', { ...order, total_amount: 0 });
    t.match(await outcomeOf(marker.id), { outcome: 'ignored', reason: 'zero_amount' });
    t.equal((await salesOf(order.id)).length, 1, 'one sale');
  },
);

t.test('both key derivations verify; a subscription renews through its first order', async (t) => {
  await customer('po-sub-1');
  const sub = crypto.randomUUID();
  const first = polarOrder({
    net_amount: 2_000,
    billing_reason: 'subscription_create',
    subscription_id: sub,
    metadata: { svc_customer_key: 'po-sub-1' },
  });
  t.match(await outcomeOf((await send('order.paid', first, 'legacy')).id), { outcome: 'attributed' });
  t.match((await salesOf(first.id))[0], { sale_type: 'subscription', is_recurring: false });
  const renewal = polarOrder({
    net_amount: 2_000,
    billing_reason: 'subscription_cycle',
    subscription_id: sub,
  });
  const r = await outcomeOf((await send('order.paid', renewal, 'spec')).id);
  t.match(r, { outcome: 'attributed' });
  t.match((await salesOf(renewal.id))[0], {
    amount_cents: 2_000,
    sale_type: 'subscription',
    is_recurring: true,
  });
  t.match(await commission(r.commission_id), { amount_cents: 200 });
});

t.test(
  'refunds: refunded + refunded tax; partial deducts its share, full reverses; before its order waits',
  async (t) => {
    await customer('po-refund-1');
    const order = polarOrder({
      net_amount: 10_000,
      tax_amount: 2_000,
      metadata: { svc_customer_key: 'po-refund-1' },
    });
    const sale = await outcomeOf((await send('order.paid', order)).id);
    t.match(await commission(sale.commission_id), { amount_cents: 1_200 });
    const partial = {
      ...order,
      ...polarOrder({
        net_amount: 10_000,
        tax_amount: 2_000,
        refunded_amount: 2_500,
        refunded_tax_amount: 500,
        id: order.id,
      }),
    };
    t.match(await outcomeOf((await send('order.refunded', partial)).id), {
      outcome: 'refund_applied',
      reason: 'refunded',
    });
    t.match(
      await commission(sale.commission_id),
      { status: 'refunded', deducted_cents: 300 },
      '3,000 of 12,000: 25%',
    );

    await customer('po-refund-2');
    const order2 = polarOrder({
      net_amount: 5_000,
      tax_amount: 1_000,
      metadata: { svc_customer_key: 'po-refund-2' },
    });
    const full = polarOrder({
      net_amount: 5_000,
      tax_amount: 1_000,
      refunded_amount: 5_000,
      refunded_tax_amount: 1_000,
      id: order2.id,
    });
    const early = await send('order.refunded', full);
    t.match(await outcomeOf(early.id), { outcome: 'waiting', reason: 'sale' });
    const sale2 = await outcomeOf((await send('order.paid', order2)).id);
    t.match(await outcomeOf(early.id, 'waiting'), { outcome: 'refund_applied', reason: 'reversed' });
    t.match(await commission(sale2.commission_id), {
      status: 'reversed',
      amount_cents: 600,
      deducted_cents: 600,
    });
  },
);

t.test('refusals: missing, malformed, wrong, stale, unknown program', async (t) => {
  const body = JSON.stringify(polarEvent('order.paid', polarOrder({ net_amount: 100 })));
  const ok = polarHeaders(body, SECRET);
  const bad = (status: number, error: string) => ({ status, body: { error } });
  t.same(await post(body, {}), bad(400, POLAR_ERRORS.missingSignature));
  t.same(
    await post(body, { ...ok, 'webhook-signature': 'v2,abc' }),
    bad(400, POLAR_ERRORS.malformedSignature),
  );
  t.same(await post(body, polarHeaders(body, 'whsec_d3Jvbmd3cm9uZw==')), bad(400, POLAR_ERRORS.badSignature));
  t.same(await post(`${body} `, ok), bad(400, POLAR_ERRORS.badSignature), 'one byte more than was signed');
  const stale = polarHeaders(body, SECRET, { ts: Math.floor(Date.now() / 1000) - 301 });
  t.same(await post(body, stale), bad(400, POLAR_ERRORS.stale));
  t.same(await post(body, ok, 999_999_999), bad(404, POLAR_ERRORS.programNotFound));
  void program;
});
