// The names a commission's and a partner's states are told by: in the API's answers and filters, the
// webhook events (shared/views) and the database's check constraints. Pure names, nothing else, so the
// views below the modules that write these states (shared/commissions, shared/partners) can state them
// without importing those modules (which write events through the views: a cycle between the folders).

export const COMMISSION_STATUSES = ['pending', 'approved', 'paid', 'reversed', 'refunded'] as const;
export type CommissionStatus = (typeof COMMISSION_STATUSES)[number];

/**
 * Why a commission is held for review, in precedence order: shared/commissions/review-reasons.ts has one
 * rule per name, in this order (checked when it loads).
 */
export const REVIEW_REASONS = [
  'self_referral',
  'partner_ip',
  'bot_traffic',
  'disposable_email',
  'shared_payout_method',
  'paid_search',
] as const;
export type ReviewReason = (typeof REVIEW_REASONS)[number];

export type PartnerStatusValue = 'approved' | 'pending' | 'rejected';
