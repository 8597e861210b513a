// The rules of partners, pure: a partner is found by email (stored trimmed and lowercased) within its
// workspace, so one person promoting several programs of the advertiser is one partner with one overall
// balance, and one partner-program (with its own balance) per program.
import { iso } from '../../common.ts';
import type { PartnerRow, PartnerProgramRow } from './dal.ts';

/** What the advertiser may add a partner with; a review may also reject (ALL_STATUSES). */
export const PARTNER_STATUSES = ['approved', 'pending'] as const;
export type PartnerStatus = (typeof PARTNER_STATUSES)[number];
export const ALL_STATUSES = ['approved', 'pending', 'rejected'] as const;

export const ERR = {
  name: 'name is required and must be 1 to 200 characters',
  email: 'email must be a valid email address',
  status: "status must be 'approved' or 'pending'",
  alreadyIn: 'Partner is already in this program',
  notInProgram: 'Partner not found in this program',
  groupId: 'group_id must be the id of a group of this program',
  groupIdType: 'group_id must be a positive integer',
  reason: 'reason must be a string of at most 500 characters',
  otherCurrency: (currency: string) =>
    `Partner earns in ${currency} in its other programs; a partner's programs share one currency (its balance is one amount)`,
} as const;

/** A validated add-partner body, normalised: an omitted or null status is approved. */
export function partnerInput(b: {
  name: string;
  email: string;
  status?: PartnerStatus | null;
  group_id?: number | null;
}) {
  return {
    name: b.name.trim(),
    email: b.email.trim().toLowerCase(),
    status: b.status ?? 'approved',
    groupId: b.group_id ?? null,
  };
}

export const toPartnerCreated = (
  partner: PartnerRow,
  pp: PartnerProgramRow,
  invite: { inviteUrl: string; expiresAt: Date } | null,
) => ({
  partner: { id: Number(partner.id), name: partner.name, email: partner.email },
  partner_program: { id: Number(pp.id), status: pp.status, created_at: iso(pp.created_at) },
  invite_url: invite?.inviteUrl ?? null,
  invite_expires_at: invite === null ? null : iso(invite.expiresAt),
});

/** A review's reason, trimmed; empty or absent is none. */
export const reasonOf = (v: string | null | undefined): string | null => v?.trim() || null;
