// The rules of the partner API, pure: what a partner sees of a program and of its commissions (never a
// customer's key or email), the payout method, and the partner's own performance (partners is 0: a partner
// does not count itself joining).
import { storedPolicy } from '../../../../shared/domain/commission-policy.ts';
import { iso } from '../../common.ts';
import { ruleOf } from '../../../../shared/views/commission.ts';
import type {
  BonusProgressRow,
  CommissionRow,
  PartnerMoneyRow,
  PartnerPayoutRow,
  PartnerProgramRow,
} from './dal.ts';

export const ERR = {
  programNotFound: 'Program not found',
  linkNotFound: 'Link not found',
  linksClosed: 'This program does not let partners create links',
  notApproved: 'Only approved partners can create links in this program',
  tooManyLinks: (max: number) => `A partner may have at most ${max} links in a program`,
  programId: 'program_id must be a positive integer',
  status: 'status must be one of pending, approved, paid, reversed, refunded',
  page: 'page must be an integer of at least 1',
  pageSize: 'pageSize must be an integer between 1 and 100',
  payoutType: "type must be 'paypal', 'wise' or 'bank_transfer'",
  payoutEmail: 'email must be a valid email address (required for paypal and wise)',
  payoutDetails: 'details must be a string of 1 to 2000 characters (required for bank_transfer)',
} as const;

/** Links a partner may hold in one program (each created one counts; the advertiser's do too). */
export const MAX_PARTNER_LINKS = 25;

export const PAYOUT_TYPES = ['paypal', 'wise', 'bank_transfer'] as const;
export type PayoutType = (typeof PAYOUT_TYPES)[number];
export const COMMISSION_STATUSES = ['pending', 'approved', 'paid', 'reversed', 'refunded'] as const;

/** Hold and minimum payout (CONTRACT "Holding, reviewing and paying out"): their defaults until set. */
const HOLD_DAYS_DEFAULT = 30;

export function toPartnerProgram(r: PartnerProgramRow) {
  return {
    program: {
      id: Number(r.program_id),
      name: r.name,
      slug: r.slug,
      description: r.description,
      currency: r.currency,
      cookie_window_days: r.cookie_window_days,
      commission: storedPolicy(r.commission),
      hold_days: r.hold_days ?? HOLD_DAYS_DEFAULT,
      min_payout_cents: r.min_payout_cents === null ? 0 : Number(r.min_payout_cents),
      partner_links: r.partner_links,
      // Full referral links (docs/codes.md): on website_url, else on the first allowed origin.
      website_url: r.website_url,
      link_base_url: r.website_url ?? r.allowed_origins[0] ?? null,
    },
    partner_id: Number(r.partner_id),
    status: r.status,
    rejection_reason: r.rejection_reason,
    balance_cents: Number(r.balance_cents),
    created_at: iso(r.created_at)!,
    // Rewards (docs/rewards.md): what this partner earns (its own policy, else its group's, else the
    // program's), its group, and the next rule up from it (null: none, or the advertiser locked it).
    commission: storedPolicy(r.commission_override ?? r.group_commission ?? r.commission),
    group: { id: Number(r.group_id), name: r.group_name, slug: r.group_slug },
    tier:
      r.tier_metric === null || r.group_locked
        ? null
        : {
            metric: r.tier_metric,
            window: r.tier_window!,
            value: Number(r.tier_value ?? 0),
            threshold: Number(r.tier_threshold),
            next_group_name: r.tier_next_group_name!,
          },
  };
}

/** A running bonus as its partner sees it: its terms and the partner's progress in the current period. */
export const toBonusProgress = (b: BonusProgressRow) => ({
  id: Number(b.id),
  name: b.name,
  metric: b.metric,
  threshold: Number(b.threshold),
  amount_cents: Number(b.amount_cents),
  period: b.period,
  starts_at: iso(b.starts_at)!,
  ends_at: iso(b.ends_at)!,
  value: Number(b.value),
  awarded: b.awarded,
});

/** A program of GET /api/partner/programs: the partner-program and its unpaid money (dal MONEY_COLUMNS). */
export const toPartnerProgramWithMoney = (r: PartnerProgramRow & PartnerMoneyRow) => ({
  ...toPartnerProgram(r),
  pending_cents: Number(r.pending_cents),
  held_cents: Number(r.held_cents),
  approved_cents: Number(r.approved_cents),
  next_payable_at: iso(r.next_payable_at),
});

export const toPartnerCommission = (r: CommissionRow) => ({
  id: Number(r.id),
  program_id: Number(r.program_id),
  status: r.status,
  amount_cents: Number(r.amount_cents),
  deducted_cents: Number(r.deducted_cents),
  currency: r.currency,
  sale_amount_cents: r.sale_amount_cents === null ? null : Number(r.sale_amount_cents),
  created_at: iso(r.created_at)!,
  payable_at: r.payable_at === null ? null : iso(r.payable_at),
  payout_id: r.payout_id === null ? null : Number(r.payout_id),
  group_id: r.group_id === null ? null : Number(r.group_id),
  rule: ruleOf(r.rule),
  bonus_id: r.bonus_id === null ? null : Number(r.bonus_id),
  coupon_code: r.coupon_code,
  under_review: r.under_review,
});

/** A payout as its partner sees it (no other partner's data, no advertiser reference beyond its own). */
export const toPartnerPayout = (r: PartnerPayoutRow) => ({
  id: Number(r.id),
  program_id: Number(r.program_id),
  partner_id: Number(r.partner_id),
  amount_cents: Number(r.amount_cents),
  commissions_cents: Number(r.commissions_cents),
  recovered_cents: Number(r.recovered_cents),
  currency: r.currency,
  status: r.status,
  commission_ids: r.commission_ids.map(Number),
  reference: r.reference,
  created_at: iso(r.created_at)!,
  paid_at: iso(r.paid_at),
});

export interface PayoutMethod {
  type: PayoutType;
  email: string | null;
  details: string | null;
}

/** The payout method's fields once its schema passed, normalised; or the 400 message. */
export function payoutMethodOf(b: {
  type: PayoutType;
  email?: string | null;
  details?: string | null;
}): PayoutMethod | string {
  const email = typeof b.email === 'string' ? b.email.trim().toLowerCase() : null;
  const details = typeof b.details === 'string' ? b.details.trim() : null;
  if ((b.type === 'paypal' || b.type === 'wise') && !email) return ERR.payoutEmail;
  if (b.type === 'bank_transfer' && !details) return ERR.payoutDetails;
  return { type: b.type, email: email || null, details: details || null };
}

/**
 * An event as a partner sees it: the spec's fields without the customer's key (events carry no email), and
 * without the sale's coupon_code, which may be another partner's code (docs/codes.md: the partner sees its
 * own code on its commissions).
 */
export function withoutCustomerData(e: Record<string, unknown>): Record<string, unknown> {
  const out = { ...e };
  delete out.customer_key;
  delete out.email;
  delete out.coupon_code;
  return out;
}

type Performance = {
  data: { partners: number }[];
  metrics: { totalPartners: number; partnersTrend: { trend: number; trendDirection: string } };
};

/** The partner's performance: `partners` is 0 (CONTRACT), the rest counted for the partner only. */
export function withoutPartnerCounts<T extends Performance>(p: T): T {
  for (const d of p.data) d.partners = 0;
  p.metrics.totalPartners = 0;
  p.metrics.partnersTrend = { trend: 0, trendDirection: 'stable' };
  return p;
}
