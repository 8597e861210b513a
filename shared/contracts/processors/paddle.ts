// Paddle Billing's events (CONTRACT part three "Revenue from every processor"; NOTES "Paddle Billing
// webhooks"): envelope `{ event_id, event_type, occurred_at, data }`. Amounts are strings of the lowest
// currency unit, tax included. A refund is an adjustment that counts only once Paddle has approved it.
import { attributionOf, cents, couponOf, customCoupon, obj, str, saleAction } from './common.ts';
import type { ProcessorAction } from './common.ts';

export const PADDLE_HANDLED_TYPES = [
  'transaction.completed',
  'adjustment.created',
  'adjustment.updated',
] as const;

/** The envelope's id and type (what the intake dedupes and lists on). */
export function paddleIdentity(event: unknown): { event_id: string | null; event_type: string | null } {
  const e = obj(event);
  return { event_id: str(e.event_id), event_type: str(e.event_type) };
}

export function interpretPaddle(event: unknown): ProcessorAction {
  const e = obj(event);
  const d = obj(e.data);
  switch (e.event_type) {
    case 'transaction.completed': {
      const id = str(d.id);
      const amount = cents(obj(obj(d.details).totals).grand_total);
      const currency = str(d.currency_code);
      if (!id || amount === null || !currency) return { kind: 'ignored', reason: 'malformed' };
      // A payment-method change or a trial start completes a transaction of nothing.
      if (amount === 0) return { kind: 'ignored', reason: 'zero_amount' };
      const subscription = str(d.subscription_id);
      const origin = str(d.origin) ?? '';
      return saleAction({
        transaction_id: id,
        amount_cents: amount,
        currency,
        attribution: attributionOf(d.custom_data),
        subscription_id: subscription,
        // `web`/`api` is the first payment; `subscription_recurring` (and a mid-cycle `subscription_update`
        // or `subscription_charge`) a later one.
        is_recurring: subscription !== null && origin.startsWith('subscription_'),
        remember_subscription: subscription !== null,
        processor_customer_id: str(d.customer_id),
        ...couponOf(customCoupon(d.custom_data), 'paddle', [str(d.discount_id)]),
      });
    }
    case 'adjustment.created':
    case 'adjustment.updated': {
      if (d.action !== 'refund') return { kind: 'ignored', reason: `adjustment_${String(d.action)}` };
      // Created as `pending_approval`; only an `approved` one moves money (a `rejected` one never does).
      if (d.status !== 'approved') return { kind: 'ignored', reason: `refund_${String(d.status)}` };
      const id = str(d.id);
      const transaction = str(d.transaction_id);
      const total = cents(obj(d.totals).total);
      if (!id || !transaction || total === null) return { kind: 'ignored', reason: 'malformed' };
      return {
        kind: 'refund',
        payment_intent: transaction,
        invoice_id: null,
        charge_id: id,
        refund_amount_cents: d.type === 'full' ? null : total,
        amount_refunded_cents: total,
      };
    }
    default:
      return { kind: 'ignored', reason: 'unhandled_type' };
  }
}

/** A subscription's transactions and their refunds share a key (in order); a one-time one has its own. */
export function paddleEventKey(event: unknown): string {
  const e = obj(event);
  const d = obj(e.data);
  if (e.event_type === 'transaction.completed') return str(d.subscription_id) ?? str(d.id) ?? '';
  if (String(e.event_type).startsWith('adjustment.'))
    return str(d.subscription_id) ?? str(d.transaction_id) ?? '';
  return str(e.event_id) ?? '';
}
