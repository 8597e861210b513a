// A commission as the management API answers it and as `commission.created` / `commission.updated` carry it:
// one function and one schema for both (STYLE "One view per object"), so what an integrator reads in an event
// is what GET …/commissions shows for the same commission.
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { COMMISSION_STATUSES, REVIEW_REASONS } from '../domain/statuses.ts';
import type { PricedRule } from '../domain/commission-policy.ts';
import { RuleOut } from '../domain/policy-schema.ts';
import { IS_TEST, OrNull, Time, UPDATED_AT, View, iso, num } from './common.ts';

export const CommissionView = View(
  {
    id: Type.Integer(),
    status: Type.String({ enum: [...COMMISSION_STATUSES] }),
    amount_cents: Type.Integer(),
    currency: Type.String(),
    sale_id: OrNull(Type.Integer(), { description: "The sale's id; null for a bonus" }),
    program_id: Type.Integer(),
    partner_id: Type.Integer(),
    customer_id: OrNull(Type.Integer(), { description: "The sale's customer; null for a bonus" }),
    refund_reason: OrNull(Type.String()),
    deducted_cents: Type.Integer({ description: 'What refunds or a rejection took back' }),
    review_reason: OrNull(Type.String({ enum: [...REVIEW_REASONS] }), {
      description: 'Why the commission waits for review (null: not held)',
    }),
    payable_at: OrNull(Time(), {
      description: "The sale's time + the program's hold_days: approved by then unless held for review",
    }),
    payout_id: OrNull(Type.Integer(), { description: 'The pending or paid payout holding it' }),
    paid_at: OrNull(Time()),
    coupon_code: OrNull(Type.String(), {
      description: 'The partner code that attributed the sale (docs/codes.md); null: none did',
    }),
    group_id: OrNull(Type.Integer(), {
      description: 'The group whose terms applied when it was priced (docs/rewards.md)',
    }),
    rule: OrNull(RuleOut),
    bonus_id: OrNull(Type.Integer(), { description: 'The bonus it pays (null: a sale)' }),
    is_test: IS_TEST,
    created_at: Time(),
    updated_at: UPDATED_AT,
  },
  'A commission: GET /api/advertiser/affiliate-programs/:id/commissions, and commission.* events',
);
export type Commission = Static<typeof CommissionView>;

/** A commission's row, as the API's reads and the lifecycle's transitions select it. */
export interface CommissionViewRow {
  id: number | string;
  status: string;
  amount_cents: number | string;
  currency: string;
  sale_id: number | string | null;
  program_id: number | string;
  partner_id: number | string;
  customer_id: number | string | null;
  refund_reason: string | null;
  deducted_cents: number | string | null;
  review_reason: string | null;
  payable_at: Date | string | null;
  payout_id: number | string | null;
  paid_at: Date | string | null;
  /** The partner code of its sale; null or absent: none. */
  coupon_code?: string | null;
  group_id: number | string | null;
  rule: PricedRule | null;
  bonus_id: number | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

/** The commission as the API answers it and its events carry it. */
export function commissionView(r: CommissionViewRow): Commission {
  return {
    id: Number(r.id),
    status: r.status as Commission['status'],
    amount_cents: Number(r.amount_cents),
    currency: r.currency.trim(),
    sale_id: num(r.sale_id),
    program_id: Number(r.program_id),
    partner_id: Number(r.partner_id),
    customer_id: num(r.customer_id),
    refund_reason: r.refund_reason,
    deducted_cents: Number(r.deducted_cents ?? 0),
    review_reason: r.review_reason as Commission['review_reason'],
    payable_at: iso(r.payable_at),
    payout_id: num(r.payout_id),
    paid_at: iso(r.paid_at),
    coupon_code: r.coupon_code ?? null,
    group_id: num(r.group_id),
    rule: ruleOf(r.rule),
    bonus_id: num(r.bonus_id),
    // A test-mode sale earns no commission.
    is_test: false,
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
  };
}

/** A commission's rule with every field present; null for rows seeded without one. */
export function ruleOf(r: PricedRule | null | undefined): PricedRule | null {
  if (!r) return null;
  return {
    source: r.source,
    type: r.type ?? null,
    percent: r.percent ?? null,
    amount_cents: r.amount_cents ?? null,
  } as PricedRule;
}
