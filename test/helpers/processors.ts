// Paddle, Lemon Squeezy and Polar webhook events for tests: the fields each processor documents (typed by
// its official SDK's wire types, so a renamed field fails the typecheck), trimmed of what svc never reads,
// and signed each processor's own way.
import { createHmac } from 'node:crypto';
import type {
  IAdjustmentNotificationResponse,
  ITransactionNotificationResponse,
} from '@paddle/paddle-node-sdk';
import type {
  Order as LsOrder,
  SubscriptionInvoice as LsSubscriptionInvoice,
} from '@lemonsqueezy/lemonsqueezy.js';
import type { Order$Outbound as PolarOrder } from '@polar-sh/sdk/models/components/order.js';
import { Webhook } from 'standardwebhooks';

let seq = 0;
const uid = () => `${Date.now().toString(36)}${(++seq).toString(36)}`;
const nowSec = () => Math.floor(Date.now() / 1000);

// ---- Paddle ------------------------------------------------------------------------------------------

type PaddleTransaction = Pick<
  ITransactionNotificationResponse,
  | 'id'
  | 'status'
  | 'customer_id'
  | 'custom_data'
  | 'currency_code'
  | 'origin'
  | 'subscription_id'
  | 'discount_id'
> & { details: { totals: { grand_total: string; total: string; tax: string; subtotal: string } } };

export function paddleTransaction(o: {
  grand_total: number;
  tax?: number;
  custom_data?: Record<string, string> | null;
  subscription_id?: string | null;
  origin?: ITransactionNotificationResponse['origin'];
  currency_code?: ITransactionNotificationResponse['currency_code'];
  discount_id?: string | null;
  id?: string;
}): PaddleTransaction {
  const tax = o.tax ?? 0;
  return {
    id: o.id ?? `txn_${uid()}`,
    status: 'completed',
    customer_id: `ctm_${uid()}`,
    custom_data: o.custom_data ?? null,
    currency_code: o.currency_code ?? 'USD',
    origin: o.origin ?? 'web',
    subscription_id: o.subscription_id ?? null,
    discount_id: o.discount_id ?? null,
    // Paddle's amounts are strings of the lowest currency unit; grand_total includes tax.
    details: {
      totals: {
        subtotal: String(o.grand_total - tax),
        tax: String(tax),
        total: String(o.grand_total),
        grand_total: String(o.grand_total),
      },
    },
  };
}

type PaddleAdjustment = Pick<
  IAdjustmentNotificationResponse,
  'id' | 'action' | 'type' | 'transaction_id' | 'subscription_id' | 'status' | 'currency_code' | 'reason'
> & { totals: { total: string; subtotal: string; tax: string } };

export function paddleAdjustment(o: {
  transaction_id: string;
  total: number;
  type?: 'full' | 'partial';
  status?: IAdjustmentNotificationResponse['status'];
  id?: string;
  subscription_id?: string | null;
}): PaddleAdjustment {
  return {
    id: o.id ?? `adj_${uid()}`,
    action: 'refund',
    type: o.type ?? 'partial',
    transaction_id: o.transaction_id,
    subscription_id: o.subscription_id ?? null,
    status: o.status ?? 'approved',
    currency_code: 'USD',
    reason: 'requested by customer',
    totals: { total: String(o.total), subtotal: String(o.total), tax: '0' },
  };
}

export function paddleEvent(event_type: string, data: unknown, event_id = `evt_${uid()}`) {
  return {
    event_id,
    event_type,
    occurred_at: new Date().toISOString(),
    notification_id: `ntf_${uid()}`,
    data,
  };
}

/** `Paddle-Signature: ts=<unix>;h1=<hex>`; `extra` secrets add their h1 (Paddle's rotation). */
export function paddleSignature(body: string, secret: string, ts = nowSec(), extra: string[] = []): string {
  const h1 = [secret, ...extra].map((s) => createHmac('sha256', s).update(`${ts}:${body}`).digest('hex'));
  return [`ts=${ts}`, ...h1.map((h) => `h1=${h}`)].join(';');
}

// ---- Lemon Squeezy -----------------------------------------------------------------------------------

type LsOrderAttributes = Pick<
  LsOrder['data']['attributes'],
  | 'store_id'
  | 'customer_id'
  | 'currency'
  | 'status'
  | 'refunded'
  | 'total'
  | 'subtotal'
  | 'tax'
  | 'tax_inclusive'
  | 'discount_total'
  | 'user_email'
> & { refunded_amount: number };

export function lsOrder(o: {
  total: number;
  refunded_amount?: number;
  currency?: string;
  status?: LsOrder['data']['attributes']['status'];
  id?: string;
}): { type: 'orders'; id: string; attributes: LsOrderAttributes } {
  const refunded = o.refunded_amount ?? 0;
  return {
    type: 'orders',
    id: o.id ?? String(100_000 + ++seq),
    attributes: {
      store_id: 1,
      customer_id: 7,
      currency: (o.currency ?? 'USD') as LsOrderAttributes['currency'],
      status: o.status ?? (refunded >= o.total ? 'refunded' : 'paid'),
      refunded: refunded >= o.total,
      refunded_amount: refunded,
      total: o.total,
      subtotal: o.total,
      tax: 0,
      tax_inclusive: false,
      discount_total: 0,
      user_email: 'buyer@example.com',
    },
  };
}

type LsInvoiceAttributes = Pick<
  LsSubscriptionInvoice['data']['attributes'],
  | 'store_id'
  | 'subscription_id'
  | 'customer_id'
  | 'billing_reason'
  | 'currency'
  | 'status'
  | 'total'
  | 'refunded_amount'
  | 'refunded'
>;

export function lsSubscriptionInvoice(o: {
  subscription_id: number;
  total: number;
  billing_reason: LsSubscriptionInvoice['data']['attributes']['billing_reason'];
  refunded_amount?: number;
  id?: string;
}): { type: 'subscription-invoices'; id: string; attributes: LsInvoiceAttributes } {
  const refunded = o.refunded_amount ?? 0;
  return {
    type: 'subscription-invoices',
    id: o.id ?? String(200_000 + ++seq),
    attributes: {
      store_id: 1,
      subscription_id: o.subscription_id,
      customer_id: 7,
      billing_reason: o.billing_reason,
      currency: 'USD',
      status: refunded >= o.total ? 'refunded' : 'paid',
      total: o.total,
      refunded_amount: refunded,
      refunded: refunded >= o.total,
    },
  };
}

export function lsEvent(
  event_name: string,
  data: unknown,
  o: { custom_data?: Record<string, string>; test_mode?: boolean } = {},
) {
  return {
    meta: {
      event_name,
      test_mode: o.test_mode ?? false,
      custom_data: o.custom_data,
      webhook_id: `wh_${uid()}`,
    },
    data,
  };
}

export const lsSignature = (body: string, secret: string) =>
  createHmac('sha256', secret).update(body).digest('hex');

// ---- Polar -------------------------------------------------------------------------------------------

type PolarOrderFields = Pick<
  PolarOrder,
  | 'id'
  | 'status'
  | 'billing_reason'
  | 'currency'
  | 'net_amount'
  | 'tax_amount'
  | 'total_amount'
  | 'refunded_amount'
  | 'refunded_tax_amount'
  | 'customer_id'
  | 'subscription_id'
  | 'discount_id'
  | 'metadata'
> & { discount: { id: string; code: string | null } | null };

export function polarOrder(o: {
  net_amount: number;
  tax_amount?: number;
  billing_reason?: 'purchase' | 'subscription_create' | 'subscription_cycle' | 'subscription_update';
  subscription_id?: string | null;
  metadata?: Record<string, string>;
  refunded_amount?: number;
  refunded_tax_amount?: number;
  discount?: { id: string; code: string | null } | null;
  id?: string;
  currency?: string;
}): PolarOrderFields {
  const tax = o.tax_amount ?? 0;
  const refunded = (o.refunded_amount ?? 0) + (o.refunded_tax_amount ?? 0);
  const total = o.net_amount + tax;
  return {
    id: o.id ?? crypto.randomUUID(),
    status: refunded === 0 ? 'paid' : refunded >= total ? 'refunded' : 'partially_refunded',
    billing_reason: o.billing_reason ?? 'purchase',
    currency: o.currency ?? 'usd',
    net_amount: o.net_amount,
    tax_amount: tax,
    total_amount: total,
    refunded_amount: o.refunded_amount ?? 0,
    refunded_tax_amount: o.refunded_tax_amount ?? 0,
    customer_id: crypto.randomUUID(),
    subscription_id: o.subscription_id ?? null,
    discount_id: o.discount?.id ?? null,
    discount: o.discount ?? null,
    metadata: o.metadata ?? {},
  };
}

export const polarEvent = (type: string, data: unknown) => ({
  type,
  timestamp: new Date().toISOString(),
  data,
});

/**
 * Standard Webhooks headers, signed with `standardwebhooks` itself. `derivation`: `spec` keys by the base64
 * after `whsec_` (Polar's secrets from 2026-09-08), `legacy` by the whole secret's UTF-8 bytes (what
 * @polar-sh/sdk's validateEvent does).
 */
export function polarHeaders(
  body: string,
  secret: string,
  o: { id?: string; ts?: number; derivation?: 'spec' | 'legacy' } = {},
): Record<string, string> {
  const id = o.id ?? `msg_${uid()}`;
  const ts = o.ts ?? nowSec();
  const key = o.derivation === 'legacy' ? Buffer.from(secret, 'utf8').toString('base64') : secret;
  const wh = new Webhook(key);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(ts),
    'webhook-signature': wh.sign(id, new Date(ts * 1000), body),
  };
}
