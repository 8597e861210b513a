// The `data` of outbound webhook events (docs/webhooks.md lists each type with an example): the object's
// current fields as the management API shows them (ids, amounts in cents, currency, status, partner and
// program ids) and its `updated_at`; `is_test` on every object, true for test-mode ones. One builder per
// object, so every writer of an event about a commission (a sale, a refund, an approval, a payout) sends
// the same shape.

const iso = (d: Date | string | null | undefined): string | null =>
  d === null || d === undefined ? null : (d instanceof Date ? d : new Date(d)).toISOString();
const num = (v: number | string | null | undefined): number | null =>
  v === null || v === undefined ? null : Number(v);

export interface CommissionFields {
  id: number | string;
  status: string;
  amount_cents: number | string;
  currency: string;
  deducted_cents?: number | string | null;
  /** Null for a bonus's commission. */
  sale_id: number | string | null;
  program_id: number | string;
  partner_id: number | string;
  customer_id?: number | string | null;
  refund_reason?: string | null;
  paid_at?: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
  /** What priced it (docs/rewards.md): its group, its rule, and the bonus it pays. */
  group_id?: number | string | null;
  rule?: unknown;
  bonus_id?: number | string | null;
}

/** `commission.created` / `commission.updated`. Extra fields (review_reason, payable_at, …) pass through. */
export function commissionData(
  c: CommissionFields,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id: Number(c.id),
    status: c.status,
    amount_cents: Number(c.amount_cents),
    deducted_cents: Number(c.deducted_cents ?? 0),
    currency: c.currency.trim(),
    sale_id: num(c.sale_id),
    program_id: Number(c.program_id),
    partner_id: Number(c.partner_id),
    customer_id: num(c.customer_id),
    refund_reason: c.refund_reason ?? null,
    paid_at: iso(c.paid_at),
    group_id: num(c.group_id),
    rule: c.rule ?? null,
    bonus_id: num(c.bonus_id),
    is_test: false,
    created_at: iso(c.created_at),
    updated_at: iso(c.updated_at),
    ...extra,
  };
}

export interface SaleFields {
  id: number | string;
  program_id: number | string;
  transaction_id: string;
  amount_cents: number | string;
  currency: string;
  sale_type: string;
  is_recurring: boolean;
  subscription_id: string | null;
  product_id: string | null;
  customer_id: number | string | null;
  customer_key: string | null;
  partner_id: number | string | null;
  is_test: boolean;
  sale_date: Date | string;
  created_at: Date | string;
  /** The partner code the sale carried (docs/codes.md); absent on rows read before codes existed. */
  coupon_code?: string | null;
}

/** `sale.created` (with its commission's id, null when it earned none) and `sale.refunded`. */
export function saleData(
  s: SaleFields,
  commissionId: number | null,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id: Number(s.id),
    program_id: Number(s.program_id),
    transaction_id: s.transaction_id,
    amount_cents: Number(s.amount_cents),
    currency: s.currency.trim(),
    sale_type: s.sale_type,
    is_recurring: s.is_recurring,
    subscription_id: s.subscription_id,
    product_id: s.product_id,
    customer_id: num(s.customer_id),
    customer_key: s.customer_key,
    partner_id: num(s.partner_id),
    coupon_code: s.coupon_code ?? null,
    commission_id: commissionId,
    is_test: s.is_test,
    sale_date: iso(s.sale_date),
    created_at: iso(s.created_at),
    updated_at: iso(s.created_at),
    ...extra,
  };
}

export interface LeadFields {
  id: number | string;
  program_id: number;
  customer_id: number | string | null;
  partner_id: number | string | null;
  click_id: string | null;
  customer_key: string | null;
  email: string | null;
  event_name: string | null;
  is_test: boolean;
  lead_timestamp: Date | string;
}

/** `lead.created`: the lead event and the customer it made a lead. */
export function leadData(l: LeadFields): Record<string, unknown> {
  const at = iso(l.lead_timestamp);
  return {
    id: Number(l.id),
    program_id: l.program_id,
    customer_id: num(l.customer_id),
    partner_id: num(l.partner_id),
    click_id: l.click_id,
    customer_key: l.customer_key,
    email: l.email,
    event_name: l.event_name,
    is_test: l.is_test,
    lead_timestamp: at,
    created_at: at,
    updated_at: at,
  };
}
