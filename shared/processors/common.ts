// What every processor's interpretation shares: the action an event asks for and the helpers that read
// payloads. Each processor's own adapter (stripe.ts, paddle.ts, lemonsqueezy.ts, polar.ts, listed in
// index.ts) reads its documented payload into these actions; the worker applies them with the /track/sale
// and /track/refund code. The message on the `processor-events` topic is shared/contracts/processor-events.ts.
import { isPlainObject } from '../json.ts';

/** Where a sale's attribution comes from: the checkout's custom data (Stripe metadata). */
export interface Attribution {
  customer_key: string | null;
  click_id: string | null;
  /** `metadata.program_id` when present: it must name the webhook's program. */
  program_id: string | null;
}

/** The partner code a sale names, carried on its SaleCommand (the sale applier matches it). */
export interface Coupon {
  coupon_code: string | null;
  /** `processor`: the adapter's name (a Processor, shared/processors/index.ts) whose discount ids these are. */
  coupon_refs: { processor: string; ids: string[] } | null;
}

export type ProcessorAction =
  | ({
      kind: 'sale';
      transaction_id: string;
      amount_cents: number;
      currency: string;
      attribution: Attribution | null;
      /** For subscription invoices: attribution falls back to the link remembered at checkout. */
      subscription_id: string | null;
      sale_type: 'one_time' | 'subscription';
      is_recurring: boolean;
      payment_intent: string | null;
      invoice_id: string | null;
      /**
       * Paddle, Polar: no checkout event links a subscription, its first payment does; the sale, when
       * attributed, also remembers the subscription's attribution for renewals without custom data.
       */
      remember_subscription?: boolean;
      /**
       * The processor's customer id: the sale's customer_key when the custom data names no customer but the
       * sale carries a partner code (the code attributes it; the codes' applier creates that customer).
       */
      processor_customer_id?: string | null;
    } & Partial<Coupon>)
  | {
      kind: 'link';
      subscription_id: string;
      processor_customer_id: string | null;
      attribution: Attribution;
    }
  | { kind: 'link_payment'; payment_intent: string; invoice_id: string }
  | {
      kind: 'refund';
      /** The sale's transaction id (Stripe: its payment intent; the others: the order or transaction). */
      payment_intent: string | null;
      invoice_id: string | null;
      /** What was refunded, for the refund's reason (Stripe's charge, Paddle's adjustment, …). */
      charge_id: string;
      /** null: the whole charge was refunded. */
      refund_amount_cents: number | null;
      amount_refunded_cents: number;
    }
  | { kind: 'ignored'; reason: string };

export type SaleAction = Extract<ProcessorAction, { kind: 'sale' }>;

/**
 * A processor's sale as the worker applies it: the currency upper-cased, `subscription` when the sale names
 * a subscription (else `one_time`), and no Stripe payment intent or invoice unless given.
 */
export function saleAction(
  s: Omit<SaleAction, 'kind' | 'sale_type' | 'payment_intent' | 'invoice_id'> &
    Partial<Pick<SaleAction, 'payment_intent' | 'invoice_id'>>,
): SaleAction {
  return {
    kind: 'sale',
    ...s,
    currency: s.currency.toUpperCase(),
    sale_type: s.subscription_id ? 'subscription' : 'one_time',
    payment_intent: s.payment_intent ?? null,
    invoice_id: s.invoice_id ?? null,
  };
}

export type Obj = Record<string, unknown>;
export const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {});
export const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
/** An id that may be a number (Lemon Squeezy's JSON:API ids are strings, its attributes' ids numbers). */
export const idOf = (v: unknown): string | null =>
  str(v) ?? (Number.isSafeInteger(v) && (v as number) > 0 ? String(v) : null);
export const int = (v: unknown): number | null =>
  Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : null;
/** Paddle's amounts: strings of the lowest currency unit ("1099"); a plain integer is taken as well. */
export const cents = (v: unknown): number | null =>
  typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : int(v);

/** The checkout's custom data as attribution: `svc_customer_key`, `svc_click_id`, `program_id`. */
export function attributionOf(metadata: unknown): Attribution | null {
  const m = obj(metadata);
  const a = {
    customer_key: str(m.svc_customer_key),
    click_id: str(m.svc_click_id),
    program_id: str(m.program_id) ?? (typeof m.program_id === 'number' ? String(m.program_id) : null),
  };
  return a.customer_key || a.click_id || a.program_id ? a : null;
}

/** `svc_coupon_code` from the custom data, trimmed; null when absent or empty. */
export const customCoupon = (metadata: unknown): string | null =>
  str(str(obj(metadata).svc_coupon_code)?.trim());

/** The coupon fields of a sale: only those present, so a sale without a code is unchanged. */
export function couponOf(
  code: string | null,
  processor: string | null,
  ids: (string | null)[],
): Partial<Coupon> {
  const refs = [...new Set(ids.filter((i): i is string => i !== null))];
  return {
    ...(code ? { coupon_code: code } : {}),
    ...(processor && refs.length > 0 ? { coupon_refs: { processor, ids: refs } } : {}),
  };
}
