// The pure mappings of Paddle, Lemon Squeezy and Polar events (shared/processors/*): which
// documented fields become a sale, a refund, a link or nothing; the ids the intake dedupes on; the partner
// code each carries (Stripe's too).
import t from 'tap';
import { interpretFor } from '../../shared/processors/index.ts';
import { lemonSqueezyIdentity } from '../../shared/processors/lemonsqueezy.ts';
import { paddleIdentity } from '../../shared/processors/paddle.ts';
import { checkoutSession, invoice, stripeEvent } from '../helpers/stripe.ts';
import {
  lsEvent,
  lsOrder,
  lsSubscriptionInvoice,
  paddleAdjustment,
  paddleEvent,
  paddleTransaction,
  polarEvent,
  polarOrder,
} from '../helpers/processors.ts';

t.test('Paddle: transaction.completed', async (t) => {
  const one = paddleTransaction({
    grand_total: 11_990,
    tax: 1_990,
    custom_data: { svc_customer_key: 'k1', svc_coupon_code: ' SPRING ' },
    discount_id: 'dsc_01',
    currency_code: 'EUR',
  });
  // A credit from the customer's balance paid 20.00: grand_total (what was charged) is below total.
  one.details.totals.total = '13990';
  t.match(interpretFor('paddle', paddleEvent('transaction.completed', one)), {
    kind: 'sale',
    transaction_id: one.id,
    amount_cents: 11_990, // grand_total (a string, tax included), not total
    currency: 'EUR',
    attribution: { customer_key: 'k1', click_id: null },
    sale_type: 'one_time',
    is_recurring: false,
    subscription_id: null,
    coupon_code: 'SPRING',
    coupon_refs: { processor: 'paddle', ids: ['dsc_01'] },
  });
  const first = paddleTransaction({ grand_total: 1500, subscription_id: 'sub_01', origin: 'web' });
  t.match(interpretFor('paddle', paddleEvent('transaction.completed', first)), {
    sale_type: 'subscription',
    subscription_id: 'sub_01',
    is_recurring: false,
    remember_subscription: true,
    attribution: null,
  });
  const renewal = paddleTransaction({
    grand_total: 1500,
    subscription_id: 'sub_01',
    origin: 'subscription_recurring',
  });
  t.match(interpretFor('paddle', paddleEvent('transaction.completed', renewal)), { is_recurring: true });
  t.notOk(
    'coupon_code' in interpretFor('paddle', paddleEvent('transaction.completed', renewal)),
    'no code, no field',
  );
  t.match(
    interpretFor('paddle', paddleEvent('transaction.completed', paddleTransaction({ grand_total: 0 }))),
    {
      kind: 'ignored',
      reason: 'zero_amount',
    },
  );
  t.match(interpretFor('paddle', paddleEvent('transaction.paid', one)), {
    kind: 'ignored',
    reason: 'unhandled_type',
  });
  t.same(paddleIdentity(paddleEvent('transaction.completed', one, 'evt_9')), {
    event_id: 'evt_9',
    event_type: 'transaction.completed',
  });
});

t.test('Paddle: refunds count once approved', async (t) => {
  const pending = paddleAdjustment({ transaction_id: 'txn_1', total: 500, status: 'pending_approval' });
  t.match(interpretFor('paddle', paddleEvent('adjustment.created', pending)), {
    kind: 'ignored',
    reason: 'refund_pending_approval',
  });
  const rejected = { ...pending, status: 'rejected' as const };
  t.match(interpretFor('paddle', paddleEvent('adjustment.updated', rejected)), {
    kind: 'ignored',
    reason: 'refund_rejected',
  });
  const approved = { ...pending, status: 'approved' as const };
  t.match(interpretFor('paddle', paddleEvent('adjustment.updated', approved)), {
    kind: 'refund',
    payment_intent: 'txn_1',
    refund_amount_cents: 500,
  });
  const full = paddleAdjustment({ transaction_id: 'txn_1', total: 2000, type: 'full' });
  t.match(interpretFor('paddle', paddleEvent('adjustment.updated', full)), {
    kind: 'refund',
    refund_amount_cents: null,
  });
  const credit = { ...approved, action: 'credit' as const };
  t.match(interpretFor('paddle', paddleEvent('adjustment.updated', credit)), {
    kind: 'ignored',
    reason: 'adjustment_credit',
  });
});

t.test('Lemon Squeezy: orders, subscription payments, refunds, test mode, ids', async (t) => {
  const order = lsOrder({ total: 4900, currency: 'usd', id: '1001' });
  const created = lsEvent('order_created', order, {
    custom_data: { svc_click_id: 'c1', svc_coupon_code: 'LS10' },
  });
  t.match(interpretFor('lemonsqueezy', created), {
    kind: 'sale',
    transaction_id: '1001',
    amount_cents: 4900,
    currency: 'USD',
    attribution: { click_id: 'c1' },
    sale_type: 'one_time',
    coupon_code: 'LS10',
  });
  t.notOk('coupon_refs' in interpretFor('lemonsqueezy', created), 'order events carry no discount id');
  t.same(lemonSqueezyIdentity(created), {
    event_id: 'order_created:1001',
    event_type: 'order_created',
    livemode: true,
  });
  t.equal(
    lemonSqueezyIdentity(lsEvent('order_created', order, { test_mode: true })).livemode,
    false,
    'test mode',
  );

  const initial = lsSubscriptionInvoice({
    subscription_id: 55,
    total: 4900,
    billing_reason: 'initial',
    id: '9',
  });
  t.match(
    interpretFor(
      'lemonsqueezy',
      lsEvent('subscription_payment_success', initial, { custom_data: { svc_customer_key: 'k' } }),
    ),
    {
      kind: 'link',
      subscription_id: '55',
    },
  );
  t.match(interpretFor('lemonsqueezy', lsEvent('subscription_payment_success', initial)), {
    kind: 'ignored',
    reason: 'initial_payment',
  });
  const renewal = lsSubscriptionInvoice({
    subscription_id: 55,
    total: 4900,
    billing_reason: 'renewal',
    id: '10',
  });
  t.match(interpretFor('lemonsqueezy', lsEvent('subscription_payment_success', renewal)), {
    kind: 'sale',
    transaction_id: 'sinv_10',
    sale_type: 'subscription',
    subscription_id: '55',
    is_recurring: true,
  });

  const partly = lsOrder({ total: 4900, refunded_amount: 1000, id: '1001' });
  const refund1 = lsEvent('order_refunded', partly);
  t.match(interpretFor('lemonsqueezy', refund1), {
    kind: 'refund',
    payment_intent: '1001',
    refund_amount_cents: 1000,
  });
  const whole = lsEvent('order_refunded', lsOrder({ total: 4900, refunded_amount: 4900, id: '1001' }));
  t.match(interpretFor('lemonsqueezy', whole), { kind: 'refund', refund_amount_cents: null });
  t.equal(
    lemonSqueezyIdentity(refund1).event_id,
    'order_refunded:1001:1000',
    'refunds: + the refunded amount',
  );
  t.equal(
    lemonSqueezyIdentity(whole).event_id,
    'order_refunded:1001:4900',
    'a second refund is another event',
  );
  const subRefund = lsSubscriptionInvoice({
    subscription_id: 55,
    total: 4900,
    billing_reason: 'renewal',
    refunded_amount: 4900,
    id: '10',
  });
  t.match(interpretFor('lemonsqueezy', lsEvent('subscription_payment_refunded', subRefund)), {
    kind: 'refund',
    payment_intent: 'sinv_10',
    refund_amount_cents: null,
  });
});

t.test('Polar: order.paid and order.refunded', async (t) => {
  const order = polarOrder({
    net_amount: 10_000,
    tax_amount: 2_000,
    metadata: { svc_customer_key: 'p1' },
    discount: { id: 'd-1', code: 'POLAR20' },
  });
  t.match(interpretFor('polar', polarEvent('order.paid', order)), {
    kind: 'sale',
    transaction_id: order.id,
    amount_cents: 12_000, // total_amount = net + tax
    currency: 'USD',
    sale_type: 'one_time',
    coupon_code: 'POLAR20',
    coupon_refs: { processor: 'polar', ids: ['d-1'] },
  });
  const custom = polarOrder({
    net_amount: 100,
    metadata: { svc_coupon_code: 'MINE' },
    discount: { id: 'd-2', code: 'THEIRS' },
  });
  t.match(
    interpretFor('polar', polarEvent('order.paid', custom)),
    { coupon_code: 'MINE' },
    'custom data first',
  );
  const cycle = polarOrder({ net_amount: 900, billing_reason: 'subscription_cycle', subscription_id: 's-1' });
  t.match(interpretFor('polar', polarEvent('order.paid', cycle)), {
    sale_type: 'subscription',
    is_recurring: true,
    remember_subscription: true,
  });
  const create = polarOrder({
    net_amount: 900,
    billing_reason: 'subscription_create',
    subscription_id: 's-1',
  });
  t.match(interpretFor('polar', polarEvent('order.paid', create)), { is_recurring: false });
  const partial = polarOrder({
    net_amount: 10_000,
    tax_amount: 2_000,
    refunded_amount: 5_000,
    refunded_tax_amount: 1_000,
  });
  t.match(interpretFor('polar', polarEvent('order.refunded', partial)), {
    kind: 'refund',
    payment_intent: partial.id,
    refund_amount_cents: 6_000, // refunded + refunded tax
  });
  const full = polarOrder({
    net_amount: 10_000,
    tax_amount: 2_000,
    refunded_amount: 10_000,
    refunded_tax_amount: 2_000,
  });
  t.match(interpretFor('polar', polarEvent('order.refunded', full)), {
    kind: 'refund',
    refund_amount_cents: null,
  });
  t.match(interpretFor('polar', polarEvent('order.created', order)), {
    kind: 'ignored',
    reason: 'unhandled_type',
  });
});

t.test('Stripe: promotion codes and svc_coupon_code', async (t) => {
  const session = {
    ...checkoutSession({ metadata: { svc_customer_key: 'k', svc_coupon_code: 'STRIPE5' } }),
    discounts: [
      { coupon: 'co_1', promotion_code: 'promo_1' },
      { coupon: 'co_2', promotion_code: { id: 'promo_2' } },
    ],
  };
  t.match(interpretFor('stripe', stripeEvent('checkout.session.completed', session)), {
    coupon_code: 'STRIPE5',
    coupon_refs: { processor: 'stripe', ids: ['promo_1', 'promo_2'] },
  });
  const inv = {
    ...invoice({ subscription: 'sub_1' }),
    discounts: [{ id: 'di_1', promotion_code: 'promo_3' }, 'di_2'],
  };
  t.match(interpretFor('stripe', stripeEvent('invoice.paid', inv)), {
    coupon_refs: { processor: 'stripe', ids: ['promo_3'] },
  });
  const plain = interpretFor('stripe', stripeEvent('checkout.session.completed', checkoutSession({})));
  t.notOk('coupon_code' in plain || 'coupon_refs' in plain, 'a sale without a code is unchanged');
});
