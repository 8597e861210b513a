// Lemon Squeezy's events (CONTRACT part three; NOTES "Lemon Squeezy webhooks"): JSON:API bodies
// `{ meta: { event_name, custom_data, test_mode }, data: { type, id, attributes } }`, no event id and no
// timestamp. `subscription_payment_success` with `billing_reason: initial` is the money of the
// `order_created` already counted: it only links the subscription. Refunded amounts are cumulative.
//
// Its adapter: `X-Signature` (hex HMAC-SHA256 of the body), the signing secret the advertiser typed in its
// webhook form (6 to 40 characters), an event id made of the event name, object id and refunded amount.
import { HttpError } from '../http-error.ts';
import { COMMON_ERRORS, HEX_SHA256, hmac, parsed, sameBytes } from './adapter.ts';
import type { ProcessorAdapter } from './adapter.ts';
import { attributionOf, couponOf, customCoupon, idOf, int, obj, str, saleAction } from './common.ts';
import type { Obj, ProcessorAction } from './common.ts';

export const LEMONSQUEEZY_ERRORS = {
  ...COMMON_ERRORS,
  missingSignature: 'Missing X-Signature header',
  malformedSignature: 'X-Signature header must be a hex HMAC-SHA256',
  badSignature: 'X-Signature does not match the body',
  notConnected: 'No Lemon Squeezy signing secret: connect Lemon Squeezy first',
  notEvent: 'Lemon Squeezy webhook body must have meta.event_name and data.id',
} as const;

export const LEMONSQUEEZY_HANDLED_TYPES = [
  'order_created',
  'order_refunded',
  'subscription_payment_success',
  'subscription_payment_refunded',
] as const;

const REFUNDS = new Set(['order_refunded', 'subscription_payment_refunded']);

/**
 * A subscription invoice's sale: its id with a prefix, since Lemon Squeezy numbers orders and subscription
 * invoices separately (order 7 and subscription invoice 7 both exist) and one program's transaction ids
 * are unique.
 */
export const subscriptionInvoiceTransaction = (id: string) => `sinv_${id}`;

/**
 * The dedupe key Lemon Squeezy does not send: event name + object id, + the cumulative refunded amount for
 * a refund (a second partial refund of one order is another event). Null when the body has none.
 */
export function lemonSqueezyIdentity(event: unknown): {
  event_id: string | null;
  event_type: string | null;
  livemode: boolean;
} {
  const e = obj(event);
  const meta = obj(e.meta);
  const name = str(meta.event_name);
  const d = obj(e.data);
  const id = idOf(d.id);
  const refunded = int(obj(d.attributes).refunded_amount);
  const eventId =
    !name || !id ? null : REFUNDS.has(name) ? `${name}:${id}:${refunded ?? 0}` : `${name}:${id}`;
  return { event_id: eventId, event_type: name, livemode: meta.test_mode !== true };
}

export function interpretLemonSqueezy(event: unknown): ProcessorAction {
  const e = obj(event);
  const meta = obj(e.meta);
  const d = obj(e.data);
  const a = obj(d.attributes);
  const id = idOf(d.id);
  const attribution = attributionOf(meta.custom_data);
  // Lemon Squeezy's order events carry no discount code: the custom data's svc_coupon_code is the only way.
  const coupon = couponOf(customCoupon(meta.custom_data), null, []);
  const amount = int(a.total);
  const currency = str(a.currency);
  switch (meta.event_name) {
    case 'order_created': {
      if (!id || amount === null || !currency) return { kind: 'ignored', reason: 'malformed' };
      if (a.status !== 'paid') return { kind: 'ignored', reason: `status_${String(a.status)}` };
      if (amount === 0) return { kind: 'ignored', reason: 'zero_amount' };
      return saleAction({
        transaction_id: id,
        amount_cents: amount,
        currency,
        attribution,
        subscription_id: null,
        is_recurring: false,
        processor_customer_id: idOf(a.customer_id),
        ...coupon,
      });
    }
    case 'subscription_payment_success': {
      const subscription = idOf(a.subscription_id);
      if (!id || !subscription || amount === null || !currency)
        return { kind: 'ignored', reason: 'malformed' };
      if (a.billing_reason === 'initial') {
        // The order_created of the same checkout counted the money; this remembers whose subscription it is.
        if (!attribution) return { kind: 'ignored', reason: 'initial_payment' };
        return {
          kind: 'link',
          subscription_id: subscription,
          processor_customer_id: idOf(a.customer_id),
          attribution,
        };
      }
      if (amount === 0) return { kind: 'ignored', reason: 'zero_amount' };
      return saleAction({
        transaction_id: subscriptionInvoiceTransaction(id),
        amount_cents: amount,
        currency,
        attribution,
        subscription_id: subscription,
        // `renewal`, or `updated` (a plan change charged mid-cycle): never the first payment.
        is_recurring: true,
        processor_customer_id: idOf(a.customer_id),
        ...coupon,
      });
    }
    case 'order_refunded':
      return refund(id, a, id);
    case 'subscription_payment_refunded':
      // The initial invoice's money is its order's: its refund comes as order_refunded.
      if (a.billing_reason === 'initial') return { kind: 'ignored', reason: 'initial_payment' };
      return refund(id, a, id ? subscriptionInvoiceTransaction(id) : null);
    default:
      return { kind: 'ignored', reason: 'unhandled_type' };
  }
}

function refund(id: string | null, a: Obj, transaction: string | null): ProcessorAction {
  const total = int(a.total);
  const refunded = int(a.refunded_amount);
  if (!id || !transaction || total === null || refunded === null)
    return { kind: 'ignored', reason: 'malformed' };
  if (refunded === 0) return { kind: 'ignored', reason: 'nothing_refunded' };
  return {
    kind: 'refund',
    payment_intent: transaction,
    invoice_id: null,
    charge_id: transaction,
    refund_amount_cents: refunded >= total ? null : refunded,
    amount_refunded_cents: refunded,
  };
}

/** An order and its refunds share a key; a subscription's invoices and their refunds share another. */
export function lemonSqueezyEventKey(event: unknown): string {
  const e = obj(event);
  const d = obj(e.data);
  const name = str(obj(e.meta).event_name) ?? '';
  if (name.startsWith('subscription_'))
    return `subscription:${idOf(obj(d.attributes).subscription_id) ?? idOf(d.id) ?? ''}`;
  return `order:${idOf(d.id) ?? ''}`;
}

/** Lemon Squeezy: `X-Signature` = hex HMAC-SHA256 of the body keyed by the secret the advertiser typed. No timestamp. */
export function verifyLemonSqueezy(raw: Buffer, header: string | undefined, secrets: string[]): unknown {
  const E = LEMONSQUEEZY_ERRORS;
  if (!header) throw new HttpError(400, E.missingSignature);
  if (!HEX_SHA256.test(header.trim())) throw new HttpError(400, E.malformedSignature);
  if (secrets.length === 0) throw new HttpError(400, E.notConnected);
  const sig = Buffer.from(header.trim(), 'hex');
  if (!secrets.some((s) => sameBytes(hmac(s, raw), sig))) throw new HttpError(400, E.badSignature);
  return parsed(raw, E.notEvent);
}

export const lemonsqueezy: ProcessorAdapter = {
  title: 'Lemon Squeezy',
  discountId: 'discount id',
  signatureHeaders: ['x-signature'],
  errors: LEMONSQUEEZY_ERRORS,
  secrets: (stored) => (stored.others?.lemonsqueezy ? [stored.others.lemonsqueezy] : []),
  secretError: (secret) =>
    secret.length < 6 || secret.length > 40
      ? 'webhook_secret must be 6 to 40 characters for Lemon Squeezy'
      : null,
  verify: (raw, headers, secrets) => verifyLemonSqueezy(raw, headers['x-signature'], secrets),
  identity: lemonSqueezyIdentity,
  eventKey: lemonSqueezyEventKey,
  interpret: interpretLemonSqueezy,
};
