// A partner's move to another group as `partner.group_changed` carries it (docs/rewards.md): the history row
// of the move (partner_group_changes). One function and one schema.
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { IS_TEST, OrNull, Time, UPDATED_AT, View } from './common.ts';

export const GroupChangeView = View(
  {
    id: Type.Integer({ description: "The move's id (its history row)" }),
    partner_id: Type.Integer(),
    partner_program_id: Type.Integer(),
    program_id: Type.Integer(),
    from_group_id: Type.Integer(),
    to_group_id: Type.Integer(),
    reason: Type.String({ enum: ['tier_rule', 'manual', 'group_deleted'] }),
    rule_id: OrNull(Type.Integer(), { description: 'The tier rule that moved it (reason tier_rule)' }),
    is_test: IS_TEST,
    created_at: Time(),
    updated_at: UPDATED_AT,
  },
  'A move of a partner to another group: partner.group_changed',
);
export type GroupChange = Static<typeof GroupChangeView>;

export interface GroupChangeViewRow {
  id: number;
  partnerId: number;
  ppId: number;
  programId: number;
  fromGroupId: number;
  toGroupId: number;
  reason: 'tier_rule' | 'manual' | 'group_deleted';
  ruleId: number | null;
  at: Date;
}

/** The move as its event carries it; its times are the move's. */
export function groupChangeView(m: GroupChangeViewRow): GroupChange {
  return {
    id: m.id,
    partner_id: m.partnerId,
    partner_program_id: m.ppId,
    program_id: m.programId,
    from_group_id: m.fromGroupId,
    to_group_id: m.toGroupId,
    reason: m.reason,
    rule_id: m.ruleId,
    is_test: false,
    created_at: m.at.toISOString(),
    updated_at: m.at.toISOString(),
  };
}
