// What a chunk of sales needs to know of the rewards, read with the statements the chunk makes anyway (a
// sale's cost is mostly its round trips): a program's groups, ladder and running bonuses come with the
// program's row (`rewardColumns`), and a customer's partner–customer pairs with the customer's locked row
// (`PAIRS_COLUMN`). rewards.ts turns them into what pricing reads.
import type { Tx } from '../../../shared/db/sql.ts';
import { storedPolicy } from '../../../shared/domain/commission-policy.ts';
import type { CommissionPolicy } from '../../../shared/domain/commission-policy.ts';
import type { Bonus, BonusMetric, BonusPeriod } from '../../../shared/domain/bonuses.ts';
import type { TierMetric, TierRule, TierWindow } from '../../../shared/domain/tiers.ts';

/** A group as pricing reads it. */
export interface GroupTerms {
  id: number;
  programId: number;
  /** Its own policy; null: the program's (the default group's always is). */
  policy: CommissionPolicy | null;
  /** null: the program's. */
  holdDays: number | null;
}

/** A partner–customer pair as the chunk reads it. */
export interface StoredPair {
  customerId: string;
  ppId: string;
  commissions: number;
  firstCommissionAt: Date | null;
  lastSaleAt: Date | null;
  pinnedGroupId: string | null;
}

/**
 * The columns a program's row carries for its sales: its groups (deleted ones too: a move may have raced a
 * deletion), its ladder in order, and its bonuses not deleted and not over before `since` (the chunk's
 * earliest sale).
 */
export const rewardColumns = (tx: Tx, since: Date) => tx`
  (select coalesce(json_agg(json_build_object('id', g.id, 'commission', g.commission, 'hold_days', g.hold_days)),
                   '[]'::json)
   from program_groups g where g.program_id = programs.id) as reward_groups,
  (select coalesce(json_agg(json_build_object('id', r.id, 'from', r.from_group_id, 'to', r.to_group_id,
                                              'metric', r.metric, 'window', r.time_window,
                                              'threshold', r.threshold, 'carry', r.carry_existing_customers)
                            order by r.position, r.id), '[]'::json)
   from tier_rules r where r.program_id = programs.id) as reward_rules,
  (select coalesce(json_agg(json_build_object('id', b.id, 'group_ids', b.group_ids, 'metric', b.metric,
                                              'threshold', b.threshold, 'amount_cents', b.amount_cents,
                                              'period', b.period, 'starts_at', b.starts_at,
                                              'ends_at', b.ends_at) order by b.id), '[]'::json)
   from bonuses b
   where b.program_id = programs.id and b.deleted_at is null and b.ends_at > ${since.toISOString()}::timestamptz)
    as reward_bonuses`;

/** What `rewardColumns` adds to a program's row. */
export interface ProgramRewardColumns {
  reward_groups: { id: number; commission: unknown; hold_days: number | null }[];
  reward_rules: {
    id: number;
    from: number;
    to: number;
    metric: TierMetric;
    window: TierWindow;
    threshold: number;
    carry: boolean;
  }[];
  reward_bonuses: {
    id: number;
    group_ids: number[] | null;
    metric: BonusMetric;
    threshold: number;
    amount_cents: number;
    period: BonusPeriod;
    starts_at: string;
    ends_at: string;
  }[];
}

/** A program's groups, ladder and bonuses from its row, parsed once per chunk (the memo). */
export function programRewards(
  programId: number,
  row: ProgramRewardColumns,
  memo: Map<string, unknown>,
): { rules: TierRule[]; bonuses: Bonus[] } {
  const known = memo.get(`rewards:${programId}`) as { rules: TierRule[]; bonuses: Bonus[] } | undefined;
  if (known) return known;
  for (const g of row.reward_groups) {
    const terms: GroupTerms = {
      id: g.id,
      programId,
      policy: g.commission === null ? null : storedPolicy(g.commission),
      holdDays: g.hold_days,
    };
    memo.set(`group:${g.id}`, terms);
  }
  const out = {
    rules: row.reward_rules.map((r) => ({
      id: r.id,
      fromGroupId: r.from,
      toGroupId: r.to,
      metric: r.metric,
      window: r.window,
      threshold: Number(r.threshold),
      carryExistingCustomers: r.carry,
    })),
    bonuses: row.reward_bonuses.map((b) => ({
      id: b.id,
      programId,
      groupIds: b.group_ids,
      metric: b.metric,
      threshold: Number(b.threshold),
      amountCents: Number(b.amount_cents),
      period: b.period,
      startsAt: new Date(b.starts_at),
      endsAt: new Date(b.ends_at),
    })),
  };
  memo.set(`rewards:${programId}`, out);
  return out;
}

/**
 * A customer's pairs, as a column of its row (the chunk's customers query and by-code's): unqualified `id`
 * is the customer's, partner_customers having none.
 */
export const PAIRS_COLUMN = `(select coalesce(json_agg(json_build_object('pp', pc.partner_program_id,
    'commissions', pc.commissions, 'first', pc.first_commission_at, 'last', pc.last_sale_at,
    'pinned', pc.pinned_group_id)), '[]'::json)
  from partner_customers pc where pc.customer_id = id) as pairs`;

/** The pairs `PAIRS_COLUMN` read for a customer. */
export function storedPairs(customerId: string, pairs: unknown): StoredPair[] {
  if (!Array.isArray(pairs)) return [];
  return (
    pairs as {
      pp: number;
      commissions: number;
      first: string | null;
      last: string | null;
      pinned: number | null;
    }[]
  ).map((p) => ({
    customerId,
    ppId: String(p.pp),
    commissions: p.commissions,
    firstCommissionAt: p.first === null ? null : new Date(p.first),
    lastSaleAt: p.last === null ? null : new Date(p.last),
    pinnedGroupId: p.pinned === null ? null : String(p.pinned),
  }));
}
