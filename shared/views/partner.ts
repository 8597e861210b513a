// A partner in a program as the partners API answers it (the list, approve, reject, the group and own-policy
// routes) and as `partner.created`, `partner.applied` and `partner.approved` carry it: one function and one
// schema for both. `id` and `partner_id` are both the partner's id (the events carried `partner_id` before
// the answers did; both stay, since integrators match on them).
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { PolicyOut } from '../domain/policy-schema.ts';
import { storedPolicy } from '../domain/commission-policy.ts';
import type { PartnerStatusValue } from '../domain/statuses.ts';
import { IS_TEST, OrNull, Time, UPDATED_AT, View, iso } from './common.ts';

export const PARTNER_PROGRAM_STATUSES = ['approved', 'pending', 'rejected'] as const;

export const PartnerView = View(
  {
    id: Type.Integer(),
    partner_id: Type.Integer({ description: 'The same as id' }),
    name: Type.String(),
    email: Type.String(),
    program_id: Type.Integer(),
    partner_program_id: Type.Integer(),
    status: Type.String({ enum: [...PARTNER_PROGRAM_STATUSES] }),
    rejection_reason: OrNull(Type.String()),
    source: Type.String({ enum: ['advertiser', 'application'] }),
    application: OrNull(
      Type.Object({
        website: OrNull(Type.String()),
        message: OrNull(Type.String()),
      }),
    ),
    claimed: Type.Boolean({ description: 'A partner account has claimed this partner record' }),
    clicks: Type.Integer(),
    balance_cents: Type.Integer(),
    program_balance_cents: Type.Integer(),
    joined_at: Time(),
    group: Type.Object(
      { id: Type.Integer(), name: Type.String(), slug: Type.String() },
      { description: 'The group whose terms the partner earns by (docs/rewards.md)' },
    ),
    group_locked: Type.Boolean({ description: 'Tier rules do not move the partner' }),
    commission_override: OrNull(PolicyOut, {
      description: "The partner's own policy, which wins over its group's (null: none)",
    }),
    is_test: IS_TEST,
    created_at: Time({ description: 'When the partner joined the program (the same as joined_at)' }),
    updated_at: UPDATED_AT,
  },
  'A partner in a program: GET /api/advertiser/affiliate-programs/:id/partners, and partner.* events',
);
export type Partner = Static<typeof PartnerView>;

/** A partner-program with its partner and group, as the partners API's reads select it. */
export interface PartnerViewRow {
  id: string;
  name: string;
  email: string;
  program_id: string;
  pp_id: string;
  status: PartnerStatusValue;
  rejection_reason: string | null;
  source: 'advertiser' | 'application';
  application: { website?: string | null; message?: string | null } | null;
  claimed: boolean;
  clicks: string;
  balance_cents: string;
  program_balance_cents: string;
  joined_at: Date;
  updated_at: Date;
  group_id: string;
  group_name: string;
  group_slug: string;
  group_locked: boolean;
  commission_override: unknown;
}

export function partnerView(r: PartnerViewRow): Partner {
  return {
    id: Number(r.id),
    partner_id: Number(r.id),
    name: r.name,
    email: r.email,
    program_id: Number(r.program_id),
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
    // No test mode for partners.
    is_test: false,
    created_at: iso(r.joined_at)!,
    updated_at: iso(r.updated_at)!,
  };
}
