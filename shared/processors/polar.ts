// Polar's events (CONTRACT part three; NOTES "Polar webhooks"): Standard Webhooks, body
// `{ type, timestamp, data }`, the event id is the `webhook-id` header. `total_amount` is what the customer
// paid (net + tax); a refund's `refunded_amount` leaves the tax out (`refunded_tax_amount` apart).
//
// Its adapter: Standard Webhooks signatures (`webhook-id`, `webhook-timestamp`, `webhook-signature`), the
// endpoint's secret, the `webhook-id` header as the event id.
import { HttpError } from '../http-error.ts';
import { COMMON_ERRORS, TOLERANCE_SECONDS, hmac, nowSec, parsed, sameBytes } from './adapter.ts';
import type { ProcessorAdapter } from './adapter.ts';
import { isPlainObject } from '../json.ts';
import { attributionOf, couponOf, customCoupon, int, obj, str, saleAction } from './common.ts';
import type { ProcessorAction } from './common.ts';

export const POLAR_ERRORS = {
  ...COMMON_ERRORS,
  missingSignature: 'Missing webhook-id, webhook-timestamp or webhook-signature header',
  malformedSignature:
    'webhook-timestamp must be unix seconds and webhook-signature a list of v1,<base64> signatures',
  badSignature: 'webhook-signature does not match the body',
  stale: `webhook-timestamp is outside the ${TOLERANCE_SECONDS} s tolerance`,
  notConnected: 'No Polar webhook secret: connect Polar first',
  notEvent: 'Polar webhook body must be an event with a type',
} as const;

export const POLAR_HANDLED_TYPES = ['order.paid', 'order.refunded'] as const;

/** Billing reasons of a payment after a subscription's first. */
const LATER_PAYMENTS = new Set(['subscription_cycle', 'subscription_update']);

export function interpretPolar(event: unknown): ProcessorAction {
  const e = obj(event);
  const d = obj(e.data);
  const id = str(d.id);
  const total = int(d.total_amount);
  switch (e.type) {
    case 'order.paid': {
      const currency = str(d.currency);
      if (!id || total === null || !currency) return { kind: 'ignored', reason: 'malformed' };
      if (total === 0) return { kind: 'ignored', reason: 'zero_amount' };
      const subscription = str(d.subscription_id);
      return saleAction({
        transaction_id: id,
        amount_cents: total,
        currency,
        attribution: attributionOf(d.metadata),
        subscription_id: subscription,
        is_recurring: subscription !== null && LATER_PAYMENTS.has(String(d.billing_reason)),
        remember_subscription: subscription !== null,
        processor_customer_id: str(d.customer_id) ?? str(obj(d.customer).id),
        ...couponOf(customCoupon(d.metadata) ?? str(obj(d.discount).code), 'polar', [str(d.discount_id)]),
      });
    }
    case 'order.refunded': {
      const refunded = int(d.refunded_amount);
      const tax = int(d.refunded_tax_amount) ?? 0;
      if (!id || total === null || refunded === null) return { kind: 'ignored', reason: 'malformed' };
      const amount = refunded + tax;
      if (amount === 0) return { kind: 'ignored', reason: 'nothing_refunded' };
      return {
        kind: 'refund',
        payment_intent: id,
        invoice_id: null,
        charge_id: id,
        refund_amount_cents: d.status === 'refunded' || amount >= total ? null : amount,
        amount_refunded_cents: amount,
      };
    }
    default:
      return { kind: 'ignored', reason: 'unhandled_type' };
  }
}

/** A subscription's orders and their refunds share a key; a one-time order and its refunds another. */
export function polarEventKey(event: unknown): string {
  const e = obj(event);
  const d = obj(e.data);
  return str(d.subscription_id) ?? str(d.id) ?? '';
}

/**
 * The keys a Polar secret may sign with: the Standard Webhooks one (the base64 after `whsec_`, secrets issued
 * from 2026-09-08) and the legacy one (the whole secret's UTF-8 bytes, what @polar-sh/sdk's validateEvent
 * uses).
 */
export function polarKeys(secret: string): Buffer[] {
  const keys = [Buffer.from(secret, 'utf8')];
  if (secret.startsWith('whsec_')) {
    const b64 = secret.slice('whsec_'.length);
    if (/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) keys.push(Buffer.from(b64, 'base64'));
  }
  return keys;
}

/**
 * Polar (Standard Webhooks): `webhook-signature: v1,<base64>[ v1,<base64>…]` = HMAC-SHA256 of
 * `"<webhook-id>.<webhook-timestamp>.<body>"`. Returns the parsed body.
 */
export function verifyPolar(
  raw: Buffer,
  headers: { id?: string; timestamp?: string; signature?: string },
  secrets: string[],
  now = nowSec(),
): unknown {
  const E = POLAR_ERRORS;
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature) throw new HttpError(400, E.missingSignature);
  const sigs = signature
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'));
  if (!/^\d{1,12}$/.test(timestamp) || sigs.length === 0) throw new HttpError(400, E.malformedSignature);
  if (secrets.length === 0) throw new HttpError(400, E.notConnected);
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), raw]);
  const ok = secrets.some((s) =>
    polarKeys(s).some((key) => {
      const mac = hmac(key, signed);
      return sigs.some((sig) => sameBytes(mac, sig));
    }),
  );
  if (!ok) throw new HttpError(400, E.badSignature);
  if (Math.abs(now - Number(timestamp)) > TOLERANCE_SECONDS) throw new HttpError(400, E.stale);
  return parsed(raw, E.notEvent);
}

export const polar: ProcessorAdapter = {
  title: 'Polar',
  discountId: 'discount id',
  signatureHeaders: ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
  errors: POLAR_ERRORS,
  secrets: (stored) => (stored.others?.polar ? [stored.others.polar] : []),
  secretError: () => null,
  verify: (raw, headers, secrets) =>
    verifyPolar(
      raw,
      {
        id: headers['webhook-id'],
        timestamp: headers['webhook-timestamp'],
        signature: headers['webhook-signature'],
      },
      secrets,
    ),
  identity: (event, headers) => ({
    event_id: headers['webhook-id'] ?? null,
    event_type: isPlainObject(event) && typeof event.type === 'string' && event.type ? event.type : null,
    livemode: true,
  }),
  eventKey: polarEventKey,
  interpret: interpretPolar,
};
