// A sale as `sale.created` and `sale.refunded` carry it (no management route answers a sale by itself: the
// spec's events list and the partner portal show their own fields). One function and one schema, so both
// events and any answer that shows a sale later say the same.
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { IS_TEST, OrNull, Time, UPDATED_AT, View, iso, num } from './common.ts';

const SALE_FIELDS = {
  id: Type.Integer(),
  program_id: Type.Integer(),
  transaction_id: Type.String(),
  amount_cents: Type.Integer(),
  currency: Type.String(),
  sale_type: Type.String(),
  is_recurring: Type.Boolean(),
  subscription_id: OrNull(Type.String()),
  product_id: OrNull(Type.String()),
  customer_id: OrNull(Type.Integer()),
  customer_key: OrNull(Type.String()),
  partner_id: OrNull(Type.Integer(), { description: 'Null: the sale was attributed to no partner' }),
  coupon_code: OrNull(Type.String(), {
    description:
      'The partner code the sale carried, as the matched code spells it, else as sent (docs/codes.md)',
  }),
  commission_id: OrNull(Type.Integer(), { description: 'The commission it earned; null: none' }),
  is_test: IS_TEST,
  sale_date: Time(),
  created_at: Time(),
  updated_at: UPDATED_AT,
};

export const SaleView = View(SALE_FIELDS, 'A sale: sale.created');
export type Sale = Static<typeof SaleView>;

export const SaleRefundedView = View(
  {
    ...SALE_FIELDS,
    refund_amount_cents: Type.Integer({ description: 'The refund as applied: at most the sale amount' }),
    refund_reason: OrNull(Type.String()),
    commission_status: OrNull(Type.String(), {
      description: "The commission's status after the refund; null: the sale earned none",
    }),
    deduction_cents: Type.Integer({ description: 'What the refund took from the commission' }),
  },
  'A refunded sale: sale.refunded (the sale, and what the refund did)',
);
export type SaleRefunded = Static<typeof SaleRefundedView>;

export interface SaleViewRow {
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

/** The sale, with its commission's id (null when it earned none); `updated_at` is its creation. */
export function saleView(s: SaleViewRow, commissionId: number | null): Sale {
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
    sale_date: iso(s.sale_date)!,
    created_at: iso(s.created_at)!,
    updated_at: iso(s.created_at)!,
  };
}

/** The refunded sale: the sale's view, what the refund did, and `updated_at` the refund's time. */
export function saleRefundedView(
  s: SaleViewRow,
  commissionId: number | null,
  refund: {
    refund_amount_cents: number;
    refund_reason: string | null;
    commission_status: string | null;
    deduction_cents: number;
    at: Date;
  },
): SaleRefunded {
  const { at, ...what } = refund;
  return { ...saleView(s, commissionId), ...what, updated_at: at.toISOString() };
}
