// SQL of a program's tier ladder: read it, and replace it as a whole (0026_rewards.sql `tier_rules`).
import { boolArray } from '../../../../shared/db/sql.ts';
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import type { TierMetric, TierWindow } from '../../../../shared/domain/tiers.ts';

/** A rule of a validated body. */
export interface TierRuleInput {
  from_group_id: number;
  to_group_id: number;
  metric: TierMetric;
  window: TierWindow;
  threshold: number;
  carry_existing_customers?: boolean;
}

export interface TierRuleRow {
  id: string;
  from_group_id: string;
  to_group_id: string;
  metric: TierMetric;
  time_window: TierWindow;
  threshold: string;
  carry_existing_customers: boolean;
}

/** The program's rules in the ladder's order. */
export function rulesOf(db: Sql | Tx, programId: number) {
  return db<TierRuleRow[]>`
    select id, from_group_id, to_group_id, metric, time_window, threshold, carry_existing_customers
    from tier_rules where program_id = ${programId} order by position, id`;
}

/**
 * The program's live groups, share-locked in id order (a deletion of one waits for this write, then removes
 * the rules that name it), after the program's row (two ladder writes of one program take turns).
 */
export async function lockGroups(tx: Tx, programId: number): Promise<Set<number>> {
  await tx`select id from programs where id = ${programId} for no key update`;
  const rows = await tx<{ id: string }[]>`
    select id from program_groups where program_id = ${programId} and deleted_at is null order by id for share`;
  return new Set(rows.map((r) => Number(r.id)));
}

/** Replaces the program's rules with these, in this order. */
export async function replaceRules(tx: Tx, programId: number, rules: readonly TierRuleInput[]) {
  await tx`delete from tier_rules where program_id = ${programId}`;
  if (rules.length === 0) return;
  await tx`
    insert into tier_rules (program_id, position, from_group_id, to_group_id, metric, time_window, threshold,
                            carry_existing_customers)
    select ${programId}, i, f, t, m, w, th, c::boolean
    from unnest(${rules.map((r) => r.from_group_id)}::bigint[], ${rules.map((r) => r.to_group_id)}::bigint[],
                ${rules.map((r) => r.metric)}::text[], ${rules.map((r) => r.window)}::text[],
                ${rules.map((r) => r.threshold)}::bigint[],
                ${boolArray(rules.map((r) => r.carry_existing_customers ?? true))}::text[])
      with ordinality as v(f, t, m, w, th, c, i)`;
}
