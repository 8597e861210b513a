// The rules of partners, pure: a partner is found by email (stored trimmed and lowercased) within its
// workspace, so one person promoting several programs of the advertiser is one partner with one overall
// balance, and one partner-program (with its own balance) per program.
import { Type } from '@sinclair/typebox';
import { PolicyOut } from '../../../../shared/domain/policy-schema.ts';
import { storedPolicy } from '../../../../shared/domain/commission-policy.ts';
import { iso } from '../../common.ts';
import type { PartnerListRow, PartnerRow, PartnerProgramRow } from './dal.ts';

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

/** A partner in a program as the partners list (and every answer about one partner) shows it. */
export const PartnerListed = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  email: Type.String(),
  partner_program_id: Type.Integer(),
  status: Type.String({ enum: [...ALL_STATUSES] }),
  rejection_reason: Type.Union([Type.String(), Type.Null()]),
  source: Type.String({ enum: ['advertiser', 'application'] }),
  application: Type.Union([
    Type.Object({
      website: Type.Union([Type.String(), Type.Null()]),
      message: Type.Union([Type.String(), Type.Null()]),
    }),
    Type.Null(),
  ]),
  claimed: Type.Boolean({ description: 'A partner account has claimed this partner record' }),
  clicks: Type.Integer(),
  balance_cents: Type.Integer(),
  program_balance_cents: Type.Integer(),
  joined_at: Type.String({ format: 'date-time' }),
  group: Type.Object(
    { id: Type.Integer(), name: Type.String(), slug: Type.String() },
    { description: 'The group whose terms the partner earns by (docs/rewards.md)' },
  ),
  group_locked: Type.Boolean({ description: 'Tier rules do not move the partner' }),
  commission_override: Type.Union([PolicyOut, Type.Null()], {
    description: "The partner's own policy, which wins over its group's (null: none)",
  }),
});

export const toPartnerListed = (r: PartnerListRow) => ({
  id: Number(r.id),
  name: r.name,
  email: r.email,
  partner_program_id: Number(r.pp_id),
  status: r.status,
  rejection_reason: r.rejection_reason,
  source: r.source,
  application:
    r.application === null
      ? null
      : { website: r.application.website ?? null, message: r.application.message ?? null },
  claimed: r.claimed,
  clicks: Number(r.clicks),
  balance_cents: Number(r.balance_cents),
  program_balance_cents: Number(r.program_balance_cents),
  joined_at: iso(r.joined_at)!,
  group: { id: Number(r.group_id), name: r.group_name, slug: r.group_slug },
  group_locked: r.group_locked,
  commission_override: r.commission_override === null ? null : storedPolicy(r.commission_override),
});
