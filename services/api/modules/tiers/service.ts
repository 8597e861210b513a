// The rules of a program's tier ladder (CONTRACT part four "Tiers"; docs/rewards.md), pure: a PUT body's
// messages, the checks no schema can state (groups of this program, a rule to its own group, cycles), and a
// rule as the API shows it. The decision a rule makes after a sale or refund is shared/domain/tiers.ts's.
import { findCycle, TIER_METRICS, TIER_WINDOWS } from '../../../../shared/domain/tiers.ts';
import type { TierRuleInput, TierRuleRow } from './dal.ts';

export type { TierRuleInput };

export const MAX_TIER_RULES = 50;

const at = (i: number) => `tier_rules[${i}]`;
export const ERR = {
  body: `Request body must be a JSON array of at most ${MAX_TIER_RULES} tier rules`,
  rule: 'must be a JSON object',
  fromGroup: 'from_group_id must be the id of a group of this program',
  toGroup: 'to_group_id must be the id of a group of this program',
  metric: `metric must be one of ${TIER_METRICS.join(', ')}`,
  window: `window must be one of ${TIER_WINDOWS.join(', ')}`,
  threshold: 'threshold must be a positive integer',
  carry: 'carry_existing_customers must be true or false',
  self: (i: number) => `${at(i)}.to_group_id must differ from from_group_id`,
  unknownGroup: (i: number, field: 'from_group_id' | 'to_group_id') =>
    `${at(i)}.${field} must be the id of a group of this program`,
  cycle: (groups: number[]) =>
    `tier_rules form a cycle (groups ${groups.join(' → ')}): a partner could move back and forth`,
} as const;

/** The first thing wrong with the ladder against the program's live groups, or null. */
export function ladderError(rules: readonly TierRuleInput[], groups: ReadonlySet<number>): string | null {
  for (const [i, r] of rules.entries()) {
    if (!groups.has(r.from_group_id)) return ERR.unknownGroup(i, 'from_group_id');
    if (!groups.has(r.to_group_id)) return ERR.unknownGroup(i, 'to_group_id');
    if (r.from_group_id === r.to_group_id) return ERR.self(i);
  }
  const cycle = findCycle(rules.map((r) => ({ fromGroupId: r.from_group_id, toGroupId: r.to_group_id })));
  return cycle ? ERR.cycle(cycle) : null;
}

export const toTierRule = (r: TierRuleRow) => ({
  id: Number(r.id),
  from_group_id: Number(r.from_group_id),
  to_group_id: Number(r.to_group_id),
  metric: r.metric,
  window: r.time_window,
  threshold: Number(r.threshold),
  carry_existing_customers: r.carry_existing_customers,
});
