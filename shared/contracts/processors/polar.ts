// Polar's events (CONTRACT part three; NOTES "Polar webhooks"): Standard Webhooks, body
// `{ type, timestamp, data }`, the event id is the `webhook-id` header. `total_amount` is what the customer
// paid (net + tax); a refund's `refunded_amount` leaves the tax out (`refunded_tax_amount` apart).
import { attributionOf, couponOf, customCoupon, int, obj, str, saleAction } from './common.ts';
import type { ProcessorAction } from './common.ts';

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
