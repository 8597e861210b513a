// Paddle Billing's events (CONTRACT part three "Revenue from every processor"; NOTES "Paddle Billing
// webhooks"): envelope `{ event_id, event_type, occurred_at, data }`. Amounts are strings of the lowest
// currency unit, tax included. A refund is an adjustment that counts only once Paddle has approved it.
//
// Its adapter: `Paddle-Signature` (ts + HMAC-SHA256 of "<ts>:<body>"), the notification destination's secret
// key, the envelope's event_id.
import { HttpError } from '../http-error.ts';
import { COMMON_ERRORS, HEX_SHA256, TOLERANCE_SECONDS, hmac, nowSec, parsed, sameBytes } from './adapter.ts';
import type { ProcessorAdapter } from './adapter.ts';
import { attributionOf, cents, couponOf, customCoupon, obj, str, saleAction } from './common.ts';
import type { ProcessorAction } from './common.ts';

export const PADDLE_ERRORS = {
  ...COMMON_ERRORS,
  missingSignature: 'Missing Paddle-Signature header',
  malformedSignature: 'Paddle-Signature header is malformed: expected ts=<unix seconds>;h1=<hex>',
  badSignature: 'Paddle-Signature does not match the body',
  stale: `Paddle-Signature timestamp is outside the ${TOLERANCE_SECONDS} s tolerance`,
  notConnected: 'No Paddle webhook secret: connect Paddle first',
  notEvent: 'Paddle webhook body must be an event with an event_id and an event_type',
} as const;

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

/**
 * Paddle: `Paddle-Signature: ts=<unix>;h1=<hex>[;h1=<hex>…]`, h1 = HMAC-SHA256 of `"<ts>:<body>"` keyed by the
 * secret string. Several h1 appear while Paddle rotates the secret: any one matching is enough.
 */
export function verifyPaddle(
  raw: Buffer,
  header: string | undefined,
  secrets: string[],
  now = nowSec(),
): unknown {
  const E = PADDLE_ERRORS;
  if (!header) throw new HttpError(400, E.missingSignature);
  let ts: string | null = null;
  const h1: Buffer[] = [];
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    const k = part.slice(0, i).trim();
    const v = part.slice(i + 1).trim();
    if (k === 'ts') ts = v;
    else if (k === 'h1' && HEX_SHA256.test(v)) h1.push(Buffer.from(v, 'hex'));
  }
  if (ts === null || !/^\d{1,12}$/.test(ts) || h1.length === 0)
    throw new HttpError(400, E.malformedSignature);
  if (secrets.length === 0) throw new HttpError(400, E.notConnected);
  const signed = Buffer.concat([Buffer.from(`${ts}:`), raw]);
  const ok = secrets.some((s) => {
    const mac = hmac(s, signed);
    return h1.some((h) => sameBytes(mac, h));
  });
  if (!ok) throw new HttpError(400, E.badSignature);
  // After the signature: a stale one is a genuine event replayed (or delivered too late).
  if (Math.abs(now - Number(ts)) > TOLERANCE_SECONDS) throw new HttpError(400, E.stale);
  return parsed(raw, E.notEvent);
}

export const paddle: ProcessorAdapter = {
  title: 'Paddle',
  discountId: 'discount id',
  signatureHeaders: ['paddle-signature'],
  errors: PADDLE_ERRORS,
  secrets: (stored) => (stored.others?.paddle ? [stored.others.paddle] : []),
  secretError: () => null,
  verify: (raw, headers, secrets) => verifyPaddle(raw, headers['paddle-signature'], secrets),
  identity: (event) => ({ ...paddleIdentity(event), livemode: true }),
  eventKey: paddleEventKey,
  interpret: interpretPaddle,
};
