// Stripe's events (CONTRACT "Payment-processor webhooks"): interpretation is pure: it reads the event as
// Stripe sends it (both the 2025+ and the older invoice and charge layouts) and says what to do; the worker
// does it with the /track/sale and /track/refund code.
//
// Its adapter: `Stripe-Signature`, checked with Stripe's own package; the endpoint's `whsec_` secret (and the
// previous one for 24 h after a roll); the event's id.
import Stripe from 'stripe';
import { HttpError } from '../http-error.ts';
import { COMMON_ERRORS, TOLERANCE_SECONDS } from './adapter.ts';
import type { ProcessorAdapter, StoredSecrets } from './adapter.ts';
import { attributionOf, couponOf, customCoupon, int, obj, str, saleAction } from './common.ts';
import type { Attribution, Obj, ProcessorAction } from './common.ts';

export const STRIPE_ERRORS = {
  missingSignature: 'Missing Stripe-Signature header',
  malformedSignature: 'Stripe-Signature header is malformed',
  badSignature: 'Webhook signature does not match',
  stale: `Webhook timestamp is outside the ${TOLERANCE_SECONDS} s tolerance`,
  notConnected: 'No webhook signing secret: connect the payment processor first',
  notEvent: 'Webhook body must be an event with an id and a type',
  ...COMMON_ERRORS,
} as const;

/** An id field that may be expanded into an object (Stripe's `expand[]`). */
const ref = (v: unknown): string | null => str(v) ?? str(obj(v).id);

/**
 * The partner code of a checkout or invoice: `metadata.svc_coupon_code`, and the promotion code ids of its
 * `discounts` (a session's `[{ coupon, promotion_code }]`; an invoice's expanded discounts).
 */
export function stripeCoupon(o: Obj, metadata: unknown) {
  const discounts = Array.isArray(o.discounts) ? o.discounts : [];
  return couponOf(
    customCoupon(metadata),
    'stripe',
    discounts.map((d) => ref(obj(d).promotion_code)),
  );
}

/** The event types this service acts on; every other type is answered 200 and ignored. */
export const HANDLED_TYPES = [
  'checkout.session.completed',
  'invoice.paid',
  'invoice.payment_succeeded',
  'charge.refunded',
  'invoice_payment.paid',
] as const;

/** The invoice's subscription id, from the 2025+ `parent.subscription_details` or the older top level. */
export function invoiceSubscription(invoice: Obj): string | null {
  return ref(obj(obj(invoice.parent).subscription_details).subscription) ?? ref(invoice.subscription);
}

/** The invoice's subscription metadata object: 2025+ `parent.subscription_details.metadata`, else the older place. */
function invoiceMetadata(invoice: Obj): unknown {
  const current = obj(obj(invoice.parent).subscription_details).metadata;
  return isEmpty(current) ? obj(invoice.subscription_details).metadata : current;
}
const isEmpty = (v: unknown) => Object.keys(obj(v)).length === 0;

/** The invoice's subscription metadata: 2025+ `parent.subscription_details.metadata`, else the older place. */
function invoiceAttribution(invoice: Obj): Attribution | null {
  return (
    attributionOf(obj(obj(invoice.parent).subscription_details).metadata) ??
    attributionOf(obj(invoice.subscription_details).metadata)
  );
}

/** What an event asks for. `event` is the parsed event object; it is trusted (its signature was verified). */
export function interpretEvent(event: unknown): ProcessorAction {
  const e = obj(event);
  const o = obj(obj(e.data).object);
  switch (e.type) {
    case 'checkout.session.completed': {
      const attribution = attributionOf(o.metadata);
      if (o.mode === 'subscription') {
        const subscription = ref(o.subscription);
        if (!subscription) return { kind: 'ignored', reason: 'no_subscription' };
        if (!attribution) return { kind: 'ignored', reason: 'no_metadata' };
        return {
          kind: 'link',
          subscription_id: subscription,
          processor_customer_id: ref(o.customer),
          attribution,
        };
      }
      if (o.mode !== 'payment') return { kind: 'ignored', reason: `mode_${String(o.mode)}` };
      if (o.payment_status !== 'paid') return { kind: 'ignored', reason: 'not_paid' };
      const amount = int(o.amount_total);
      const currency = str(o.currency);
      const id = ref(o.payment_intent) ?? str(o.id);
      if (amount === null || !currency || !id) return { kind: 'ignored', reason: 'malformed' };
      return saleAction({
        transaction_id: id,
        amount_cents: amount,
        currency,
        attribution,
        subscription_id: null,
        is_recurring: false,
        payment_intent: ref(o.payment_intent),
        processor_customer_id: ref(o.customer),
        ...stripeCoupon(o, o.metadata),
      });
    }
    case 'invoice.paid':
    case 'invoice.payment_succeeded': {
      const id = str(o.id);
      const amount = int(o.amount_paid);
      const currency = str(o.currency);
      if (!id || amount === null || !currency) return { kind: 'ignored', reason: 'malformed' };
      const subscription = invoiceSubscription(o);
      return saleAction({
        transaction_id: id,
        amount_cents: amount,
        currency,
        attribution: invoiceAttribution(o),
        subscription_id: subscription,
        is_recurring: subscription !== null && o.billing_reason !== 'subscription_create',
        payment_intent: ref(o.payment_intent),
        invoice_id: id,
        processor_customer_id: ref(o.customer),
        ...stripeCoupon(o, invoiceMetadata(o)),
      });
    }
    case 'charge.refunded': {
      const id = str(o.id);
      const amount = int(o.amount);
      const refunded = int(o.amount_refunded);
      if (!id || amount === null || refunded === null) return { kind: 'ignored', reason: 'malformed' };
      const paymentIntent = ref(o.payment_intent);
      const invoice = ref(o.invoice);
      if (!paymentIntent && !invoice) return { kind: 'ignored', reason: 'no_payment_reference' };
      return {
        kind: 'refund',
        payment_intent: paymentIntent,
        invoice_id: invoice,
        charge_id: id,
        refund_amount_cents: refunded >= amount ? null : refunded,
        amount_refunded_cents: refunded,
      };
    }
    case 'invoice_payment.paid': {
      const invoice = ref(o.invoice);
      const payment = obj(o.payment);
      const paymentIntent = ref(payment.payment_intent);
      if (!invoice || !paymentIntent) return { kind: 'ignored', reason: 'no_payment_intent' };
      return { kind: 'link_payment', payment_intent: paymentIntent, invoice_id: invoice };
    }
    default:
      return { kind: 'ignored', reason: 'unhandled_type' };
  }
}

/**
 * The Kafka key of an event: the events of one payment, invoice or subscription share it and so stay in
 * order (a checkout and its refund by payment intent; a subscription's checkout and its invoices by
 * subscription). Events that relate across keys (an invoice's refund) wait for what they refer to.
 */
export function eventKey(event: unknown): string {
  const e = obj(event);
  const o = obj(obj(e.data).object);
  switch (e.type) {
    case 'checkout.session.completed':
      return (
        (o.mode === 'subscription' ? ref(o.subscription) : null) ?? ref(o.payment_intent) ?? str(o.id) ?? ''
      );
    case 'invoice.paid':
    case 'invoice.payment_succeeded':
      return invoiceSubscription(o) ?? str(o.id) ?? '';
    case 'charge.refunded':
      return ref(o.payment_intent) ?? ref(o.invoice) ?? str(o.id) ?? '';
    case 'invoice_payment.paid':
      return ref(obj(o.payment).payment_intent) ?? ref(o.invoice) ?? '';
    default:
      return str(e.id) ?? '';
  }
}

const stripe = new Stripe('sk_unused_signature_checks_only');

/** The verified event, or the 400 that says why not. Tries the current secret, then the rolled one. */
export function verifyEvent(raw: Buffer, header: string, secrets: string[], nowSeconds?: number): unknown {
  if (secrets.length === 0) throw new HttpError(400, STRIPE_ERRORS.notConnected);
  let stale = false;
  for (const secret of secrets) {
    try {
      return stripe.webhooks.constructEvent(raw, header, secret, TOLERANCE_SECONDS, undefined, nowSeconds);
    } catch (err) {
      // A verified body that is not JSON: the signature matched, the content is wrong.
      if (err instanceof SyntaxError) throw new HttpError(400, STRIPE_ERRORS.notEvent);
      const message = (err as Error).message;
      if (/extract timestamp and signatures/i.test(message))
        throw new HttpError(400, STRIPE_ERRORS.malformedSignature);
      if (/tolerance zone/i.test(message)) stale = true;
    }
  }
  throw new HttpError(400, stale ? STRIPE_ERRORS.stale : STRIPE_ERRORS.badSignature);
}

/** The secrets to verify with now: the current one, then the rolled one while it has not expired. */
export function liveSecrets(s: StoredSecrets, now = Date.now()): string[] {
  const out = s.secret ? [s.secret] : [];
  if (s.previousSecret && s.previousExpiresAt !== null && s.previousExpiresAt > now)
    out.push(s.previousSecret);
  return out;
}

export const stripeAdapter: ProcessorAdapter = {
  title: 'Stripe',
  discountId: 'promotion_code id',
  signatureHeaders: ['stripe-signature'],
  errors: STRIPE_ERRORS,
  secrets: liveSecrets,
  secretError: (secret) =>
    secret.startsWith('whsec_') ? null : 'webhook_secret must start with whsec_ for Stripe',
  verify: (raw, headers, secrets) => verifyEvent(raw, headers['stripe-signature'] ?? '', secrets),
  identity: (event) => {
    const e = obj(event);
    return {
      event_id: typeof e.id === 'string' && e.id !== '' ? e.id : null,
      event_type: typeof e.type === 'string' ? e.type : null,
      livemode: e.livemode !== false,
    };
  },
  eventKey,
  interpret: interpretEvent,
};
