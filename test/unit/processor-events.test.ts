// What each Stripe event asks for, read from payloads shaped like Stripe's (2025+ and older layouts).
import t from 'tap';
import { eventKey, interpretEvent } from '../../shared/processors/stripe.ts';
import { charge, checkoutSession, invoice, invoicePayment, stripeEvent } from '../helpers/stripe.ts';

const meta = { svc_customer_key: 'user_42', svc_click_id: 'cust_1_2', program_id: '7' };

t.test('a paid one-time checkout is a sale of its payment intent', async (t) => {
  const s = checkoutSession({ amount_total: 12345, currency: 'eur', metadata: meta });
  const a = interpretEvent(stripeEvent('checkout.session.completed', s));
  t.match(a, {
    kind: 'sale',
    transaction_id: s.payment_intent,
    amount_cents: 12345,
    currency: 'EUR',
    attribution: { customer_key: 'user_42', click_id: 'cust_1_2', program_id: '7' },
    sale_type: 'one_time',
    is_recurring: false,
    payment_intent: s.payment_intent,
    invoice_id: null,
  });
  t.equal(eventKey(stripeEvent('checkout.session.completed', s)), s.payment_intent);
  const noPi = checkoutSession({ payment_intent: null });
  t.match(interpretEvent(stripeEvent('checkout.session.completed', noPi)), { transaction_id: noPi.id });
  t.match(interpretEvent(stripeEvent('checkout.session.completed', checkoutSession({}))), {
    kind: 'sale',
    attribution: null,
  });
});

t.test('an unpaid checkout or a setup checkout records nothing', async (t) => {
  t.same(
    interpretEvent(stripeEvent('checkout.session.completed', checkoutSession({ payment_status: 'unpaid' }))),
    { kind: 'ignored', reason: 'not_paid' },
  );
  const setup = { ...checkoutSession({}), mode: 'setup' };
  t.same(interpretEvent(stripeEvent('checkout.session.completed', setup)), {
    kind: 'ignored',
    reason: 'mode_setup',
  });
});

t.test('a subscription checkout links the subscription, and is keyed by it', async (t) => {
  const s = checkoutSession({ mode: 'subscription', metadata: { svc_customer_key: 'user_9' } });
  t.same(interpretEvent(stripeEvent('checkout.session.completed', s)), {
    kind: 'link',
    subscription_id: s.subscription,
    processor_customer_id: s.customer,
    attribution: { customer_key: 'user_9', click_id: null, program_id: null },
  });
  t.equal(eventKey(stripeEvent('checkout.session.completed', s)), s.subscription);
  const bare = checkoutSession({ mode: 'subscription' });
  t.same(interpretEvent(stripeEvent('checkout.session.completed', bare)), {
    kind: 'ignored',
    reason: 'no_metadata',
  });
});

for (const layout of ['basil', 'legacy'] as const) {
  t.test(`a paid invoice is a subscription sale (${layout} layout)`, async (t) => {
    const sub = `sub_${layout}`;
    const first = invoice({
      layout,
      subscription: sub,
      billing_reason: 'subscription_create',
      amount_paid: 2900,
      metadata: meta,
    });
    for (const type of ['invoice.paid', 'invoice.payment_succeeded']) {
      t.match(interpretEvent(stripeEvent(type, first)), {
        kind: 'sale',
        transaction_id: first.id,
        amount_cents: 2900,
        currency: 'USD',
        sale_type: 'subscription',
        subscription_id: sub,
        is_recurring: false,
        attribution: { customer_key: 'user_42' },
        invoice_id: first.id,
        // The 2025+ invoice names no payment intent (invoice_payment.paid links it); the older one does.
        payment_intent: 'payment_intent' in first ? first.payment_intent : null,
      });
      t.equal(eventKey(stripeEvent(type, first)), sub, 'keyed by its subscription');
    }
    const renewal = invoice({ layout, billing_reason: 'subscription_cycle' });
    t.match(interpretEvent(stripeEvent('invoice.paid', renewal)), {
      is_recurring: true,
      attribution: null,
    });
  });
}

t.test('an invoice without a subscription is a one-time sale', async (t) => {
  const inv = invoice({ subscription: null, billing_reason: 'manual' });
  t.match(interpretEvent(stripeEvent('invoice.paid', inv)), {
    kind: 'sale',
    sale_type: 'one_time',
    is_recurring: false,
    subscription_id: null,
  });
});

t.test('a refunded charge is a refund, partial when less than the amount was refunded', async (t) => {
  const full = charge({ amount: 5000, payment_intent: 'pi_1' });
  t.match(interpretEvent(stripeEvent('charge.refunded', full)), {
    kind: 'refund',
    payment_intent: 'pi_1',
    refund_amount_cents: null,
    amount_refunded_cents: 5000,
  });
  const partial = charge({ amount: 5000, amount_refunded: 1200, payment_intent: 'pi_2' });
  t.match(interpretEvent(stripeEvent('charge.refunded', partial)), { refund_amount_cents: 1200 });
  const legacy = charge({ amount: 2900, invoice: 'in_1' });
  t.match(interpretEvent(stripeEvent('charge.refunded', legacy)), {
    kind: 'refund',
    payment_intent: null,
    invoice_id: 'in_1',
  });
  t.equal(eventKey(stripeEvent('charge.refunded', full)), 'pi_1', 'keyed like its checkout');
  t.same(interpretEvent(stripeEvent('charge.refunded', charge({}))), {
    kind: 'ignored',
    reason: 'no_payment_reference',
  });
});

t.test('invoice_payment.paid links a payment intent to its invoice', async (t) => {
  const p = invoicePayment({ invoice: 'in_9', payment_intent: 'pi_9' });
  t.same(interpretEvent(stripeEvent('invoice_payment.paid', p)), {
    kind: 'link_payment',
    payment_intent: 'pi_9',
    invoice_id: 'in_9',
  });
});

t.test('other types and malformed objects are ignored, never thrown on', async (t) => {
  t.same(interpretEvent(stripeEvent('customer.created', { id: 'cus_1' })), {
    kind: 'ignored',
    reason: 'unhandled_type',
  });
  t.same(interpretEvent(stripeEvent('invoice.paid', { id: 'in_1', amount_paid: -5, currency: 'usd' })), {
    kind: 'ignored',
    reason: 'malformed',
  });
  for (const junk of [null, 42, 'x', [], { type: 'invoice.paid' }, { type: 'charge.refunded', data: 1 }]) {
    t.doesNotThrow(() => interpretEvent(junk));
    t.doesNotThrow(() => eventKey(junk));
  }
});
