// Replacing a program's tier ladder, one transaction (the unit-of-work rule: docs/architecture.md): the
// groups it names are checked under their share locks, so a concurrent deletion of one cannot leave a rule
// pointing at it.
import type { Sql } from '../../../../shared/db/sql.ts';
import * as dal from './dal.ts';
import { ladderError } from './service.ts';
import type { TierRuleInput } from './service.ts';

/** The new ladder, or the 400's message (nothing changed then). */
export function replaceLadder(
  sql: Sql,
  programId: number,
  rules: readonly TierRuleInput[],
): Promise<dal.TierRuleRow[] | { error: string }> {
  return sql.begin(async (tx) => {
    const error = ladderError(rules, await dal.lockGroups(tx, programId));
    if (error !== null) return { error };
    await dal.replaceRules(tx, programId, rules);
    return dal.rulesOf(tx, programId);
  });
}
