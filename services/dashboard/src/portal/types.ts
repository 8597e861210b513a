// What the partner API answers (CONTRACT part two "Partners who sign in"; docs/partners.md), as the portal
// reads it. Amounts are integer cents in the program's currency.
import type { CommissionPolicy } from '../../../../shared/contracts/management.ts';

export type { CommissionPolicy };

export interface Account {
  id: number;
  email: string;
  name: string | null;
  /** A sign-in link followed or an invite accepted; until then the account sees only a banner. */
  email_verified?: boolean;
  /** A sign-in link mailed to the address followed: invitations of other workspaces are shown. */
  mailbox_verified?: boolean;
}

/** GET /api/partner/invitations, one row: a workspace's partner record of the account's email. */
export interface Invitation {
  partner_id: number;
  workspace_name: string | null;
  programs: { id: number; name: string; commission: CommissionPolicy; currency: string }[];
}

/** GET /api/partner/auth/session: the signed-in account and the CSRF token for its writes. */
export interface PartnerSessionInfo {
  account: Account;
  csrf_token: string;
  expires_at: string;
}

export type PartnerStatus = 'pending' | 'approved' | 'rejected';

/** The terms a partner (or an applicant, on the public page) sees of a program. */
export interface ProgramTerms {
  name: string;
  slug: string;
  currency: string;
  cookie_window_days: number;
  commission: CommissionPolicy;
  /** Days a commission waits before it is payable (absent before payouts exist: treated as 0). */
  hold_days?: number | null;
  min_payout_cents?: number | null;
}

/** GET /api/partner/programs, one row: a partner record of the account in one program. */
export interface PartnerProgram {
  program: ProgramTerms & {
    id: number;
    /** Whether the partner may create their own links (absent: allowed). */
    partner_links?: boolean;
    /** The page the program's links lead to, when the API says (else its first allowed origin). */
    landing_url?: string | null;
    allowed_origins?: string[];
  };
  partner_id: number;
  status: PartnerStatus;
  /** The advertiser's reason, when rejected (may be null). */
  rejection_reason?: string | null;
  balance_cents: number;
  created_at: string;
  /** Owed, unpaid: in its hold or held for review (amount less deductions; held ones included). */
  pending_cents?: number;
  /** The part of pending_cents held for the advertiser's review. */
  held_cents?: number;
  /** Approved, in no payout yet: what the next payout pays. */
  approved_cents?: number;
  /** When the earliest pending, not held commission becomes payable (null: none). */
  next_payable_at?: string | null;
}

export interface PartnerLink {
  id: number;
  short_link: string;
  status: 'active' | 'inactive';
  clicks: number;
  last_clicked: string | null;
  /** The full referral URL, when the API builds it. */
  url?: string | null;
}

export type CommissionStatus = 'pending' | 'approved' | 'paid' | 'reversed' | 'refunded';

export interface PartnerCommission {
  id: number;
  program_id: number;
  status: CommissionStatus;
  amount_cents: number;
  /** What refunds took back of it. */
  deducted_cents?: number;
  currency: string;
  sale_amount_cents: number;
  created_at: string;
  payable_at: string | null;
  payout_id: number | null;
}

export interface PartnerPayout {
  id: number;
  program_id: number;
  amount_cents: number;
  currency: string;
  status: 'pending' | 'paid' | 'canceled';
  reference?: string | null;
  created_at: string;
  paid_at: string | null;
}

export interface PayoutMethod {
  type: 'paypal' | 'wise' | 'bank_transfer';
  email?: string | null;
  details?: string | null;
}

/** The spec's performance answer (GET …/performance), the parts the portal shows. */
export interface Performance {
  data: {
    date: string;
    clicks: number;
    leads: number;
    conversions: number;
    revenue: number;
    commission: number;
  }[];
  metrics: {
    totalClicks: number;
    totalLeads: number;
    totalConversions: number;
    totalRevenue: number;
    totalPartnersCommission: number;
    conversionRate: number;
  };
  meta: { dateFrom: string; dateTo: string };
}
