// The rules of partners, pure: a partner is found by email (stored trimmed and lowercased) within its
// workspace, so one person promoting several programs of the advertiser is one partner with one overall
// balance, and one partner-program (with its own balance) per program.
import { iso } from '../../common.ts';
import type { PartnerListRow, PartnerRow, PartnerProgramRow } from './dal.ts';

export const PARTNER_STATUSES = ['approved', 'pending'] as const;
export type PartnerStatus = (typeof PARTNER_STATUSES)[number];

export const ERR = {
  name: 'name is required and must be 1 to 200 characters',
  email: 'email must be a valid email address',
  status: "status must be 'approved' or 'pending'",
  alreadyIn: 'Partner is already in this program',
  otherCurrency: (currency: string) =>
    `Partner earns in ${currency} in its other programs; a partner's programs share one currency (its balance is one amount)`,
} as const;

/** A validated add-partner body, normalised: an omitted or null status is approved. */
export function partnerInput(b: { name: string; email: string; status?: PartnerStatus | null }) {
  return { name: b.name.trim(), email: b.email.trim().toLowerCase(), status: b.status ?? 'approved' };
}

export const toPartnerCreated = (partner: PartnerRow, pp: PartnerProgramRow) => ({
  partner: { id: Number(partner.id), name: partner.name, email: partner.email },
  partner_program: { id: Number(pp.id), status: pp.status, created_at: iso(pp.created_at) },
});

export const toPartnerListed = (r: PartnerListRow) => ({
  id: Number(r.id),
  name: r.name,
  email: r.email,
  partner_program_id: Number(r.pp_id),
  status: r.status,
  clicks: Number(r.clicks),
  balance_cents: Number(r.balance_cents),
  program_balance_cents: Number(r.program_balance_cents),
  joined_at: iso(r.joined_at),
});
