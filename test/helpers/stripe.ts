// Stripe-shaped webhook events for tests: the fields real events carry (trimmed of what svc never reads),
// in both the 2025+ ("basil") layout and the older one, signed with the official package.
import Stripe from 'stripe';

const stripe = new Stripe('sk_test_unused');
let seq = 0;
const id = (prefix: string) => `${prefix}_${Date.now().toString(36)}${(++seq).toString(36)}`;

export interface EventOptions {
  livemode?: boolean;
  id?: string;
  created?: number;
}

export function stripeEvent(type: string, object: Record<string, unknown>, opts: EventOptions = {}) {
  return {
    id: opts.id ?? id('evt'),
    object: 'event',
    api_version: '2025-03-31.basil',
    created: opts.created ?? Math.floor(Date.now() / 1000),
    data: { object },
    livemode: opts.livemode ?? true,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
}

export function checkoutSession(o: {
  mode?: 'payment' | 'subscription';
  amount_total?: number;
  currency?: string;
  payment_intent?: string | null;
  subscription?: string | null;
  customer?: string;
  metadata?: Record<string, string>;
  payment_status?: string;
}) {
  const mode = o.mode ?? 'payment';
  return {
    id: id('cs_test'),
    object: 'checkout.session',
    amount_subtotal: o.amount_total ?? 4900,
    amount_total: o.amount_total ?? 4900,
    currency: o.currency ?? 'usd',
    customer: o.customer ?? id('cus'),
    metadata: o.metadata ?? {},
    mode,
    payment_intent:
      mode === 'payment' ? (o.payment_intent === undefined ? id('pi') : o.payment_intent) : null,
    payment_status: o.payment_status ?? 'paid',
    status: 'complete',
    subscription: mode === 'subscription' ? (o.subscription ?? id('sub')) : null,
  };
}

/** An invoice in the 2025+ layout (`parent.subscription_details`) or the older one (top-level fields). */
export function invoice(o: {
  layout?: 'basil' | 'legacy';
  subscription?: string | null;
  amount_paid?: number;
  currency?: string;
  billing_reason?: string;
  metadata?: Record<string, string>;
  payment_intent?: string;
  customer?: string;
}) {
  const base = {
    id: id('in'),
    object: 'invoice',
    amount_due: o.amount_paid ?? 2900,
    amount_paid: o.amount_paid ?? 2900,
    billing_reason: o.billing_reason ?? 'subscription_cycle',
    currency: o.currency ?? 'usd',
    customer: o.customer ?? id('cus'),
    status: 'paid',
  };
  const sub = o.subscription === undefined ? id('sub') : o.subscription;
  if ((o.layout ?? 'basil') === 'basil') {
    return {
      ...base,
      parent: sub
        ? {
            type: 'subscription_details',
            quote_details: null,
            subscription_details: { metadata: o.metadata ?? {}, subscription: sub },
          }
        : null,
    };
  }
  return {
    ...base,
    payment_intent: o.payment_intent ?? id('pi'),
    subscription: sub,
    subscription_details: { metadata: o.metadata ?? {} },
  };
}

export function charge(o: {
  amount?: number;
  amount_refunded?: number;
  payment_intent?: string | null;
  invoice?: string | null;
  currency?: string;
}) {
  const amount = o.amount ?? 4900;
  const refunded = o.amount_refunded ?? amount;
  return {
    id: id('ch'),
    object: 'charge',
    amount,
    amount_captured: amount,
    amount_refunded: refunded,
    currency: o.currency ?? 'usd',
    payment_intent: o.payment_intent ?? null,
    ...(o.invoice === undefined ? {} : { invoice: o.invoice }),
    refunded: refunded >= amount,
    status: 'succeeded',
  };
}

export function invoicePayment(o: { invoice: string; payment_intent: string }) {
  return {
    id: id('inpay'),
    object: 'invoice_payment',
    invoice: o.invoice,
    is_default: true,
    payment: { type: 'payment_intent', payment_intent: o.payment_intent },
    status: 'paid',
  };
}

/** The `Stripe-Signature` header for `payload` as Stripe would send it (`timestamp` in seconds). */
export function signature(payload: string, secret: string, timestamp?: number): string {
  return stripe.webhooks.generateTestHeaderString({
    payload,
    secret,
    ...(timestamp === undefined ? {} : { timestamp }),
  });
}
