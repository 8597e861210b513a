// The commissions API's own rules, pure: the listing's filters and messages, and a commission as the API
// shows it. Which transitions a commission allows, and what they write and cause, are the lifecycle's
// (shared/commissions/states.ts).
import { COMMISSION_STATUSES, REFUSED, REVIEW_REASONS } from '../../../../shared/commissions/states.ts';
import { iso } from '../../common.ts';
import type { CommissionRow } from './dal.ts';
import type { PricedRule } from '../../../../shared/domain/commission-policy.ts';

export { COMMISSION_STATUSES, REVIEW_REASONS };
/** The listing's filters: a status, or `review` (held for review, not yet approved or rejected). */
export const COMMISSION_FILTERS = [...COMMISSION_STATUSES, 'review'] as const;
export type CommissionFilter = (typeof COMMISSION_FILTERS)[number];

export const ERR = {
  notFound: 'Commission not found',
  status: `status must be one of ${COMMISSION_FILTERS.join(', ')}`,
  limit: 'limit must be an integer from 1 to 1000',
  offset: 'offset must be a non-negative integer',
  reason: 'reason must be a string of at most 500 characters',
  notHeld: REFUSED.notHeld,
  held: REFUSED.held,
} as const;

export const toCommission = (r: CommissionRow) => ({
  id: Number(r.id),
  status: r.status,
  amount_cents: Number(r.amount_cents),
  currency: r.currency,
  sale_id: r.sale_id === null ? null : Number(r.sale_id),
  partner_id: Number(r.partner_id),
  refund_reason: r.refund_reason,
  deducted_cents: Number(r.deducted_cents),
  review_reason: r.review_reason,
  payable_at: iso(r.payable_at),
  payout_id: r.payout_id === null ? null : Number(r.payout_id),
  paid_at: iso(r.paid_at),
  created_at: iso(r.created_at)!,
  coupon_code: r.coupon_code ?? null,
  group_id: r.group_id === null ? null : Number(r.group_id),
  rule: ruleOf(r.rule),
  bonus_id: r.bonus_id === null ? null : Number(r.bonus_id),
});

/** A commission's rule as the API shows it (every field present; null for rows seeded without one). */
export function ruleOf(r: PricedRule | null | undefined): PricedRule | null {
  if (!r) return null;
  return {
    source: r.source,
    type: r.type ?? null,
    percent: r.percent ?? null,
    amount_cents: r.amount_cents ?? null,
  } as PricedRule;
}
