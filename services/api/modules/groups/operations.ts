// The group writes, one transaction each (the unit-of-work rule: docs/architecture.md): create, change and
// delete a group (its partners moved to the default group, each move announced), and move a partner by
// hand. Moves go through shared/rewards/moves.ts, the one writer of a partner's group.
import type { Sql } from '../../../../shared/db/sql.ts';
import { movePartners } from '../../../../shared/rewards/moves.ts';
import { createGroupIn } from '../../../../shared/rewards/groups.ts';
import type { MoveContext } from '../../../../shared/rewards/moves.ts';
import * as dal from './dal.ts';
import type { GroupFields } from './dal.ts';

/** The new group's id; 'taken' when every slug tried is taken in the program. */
export function createGroup(
  sql: Sql,
  programId: number,
  f: GroupFields & { name: string },
  slugs: string[],
): Promise<string | 'taken'> {
  return sql.begin((tx) => createGroupIn(tx, programId, f, slugs));
}

/** Changes the group; false when it is not a live group of the program. Throws the slug's unique violation. */
export function changeGroup(sql: Sql, programId: number, groupId: number, f: GroupFields): Promise<boolean> {
  return sql.begin(async (tx) => {
    const g = await dal.lockGroup(tx, programId, groupId);
    if (!g) return false;
    await dal.updateGroup(tx, Number(g.id), g.is_default, f);
    return true;
  });
}

/**
 * Deletes a group that is not the default: its partners move to the default group (a `partner.group_changed`
 * each, reason `group_deleted`), its commissions stay as they are. undefined: no such group; 'default': it
 * is the default group.
 */
export function deleteGroup(
  sql: Sql,
  ctx: MoveContext,
  programId: number,
  groupId: number,
): Promise<'deleted' | 'default' | undefined> {
  return sql.begin(async (tx) => {
    const g = await dal.lockGroup(tx, programId, groupId);
    if (!g) return undefined;
    if (g.is_default) return 'default' as const;
    const to = await dal.defaultGroupOf(tx, programId);
    const members = await dal.membersOf(tx, Number(g.id));
    await movePartners(
      tx,
      ctx,
      members.map((ppId) => ({
        ppId,
        fromGroupId: Number(g.id),
        toGroupId: to,
        reason: 'group_deleted' as const,
        ruleId: null,
      })),
    );
    await dal.retireGroup(tx, Number(g.id));
    return 'deleted' as const;
  });
}

/**
 * Puts the partner in the group (by hand: tier rules never undo it unless they apply again) and sets its
 * lock when given. undefined: the partner is not in the program; 'group': no such group in the program.
 */
export function placePartner(
  sql: Sql,
  ctx: MoveContext,
  programId: number,
  partnerId: number,
  groupId: number,
  locked: boolean | undefined,
): Promise<'placed' | 'group' | undefined> {
  return sql.begin(async (tx) => {
    const pp = await dal.lockMembership(tx, programId, partnerId);
    if (!pp) return undefined;
    if (!(await dal.groupOf(tx, programId, groupId))) return 'group' as const;
    if (Number(pp.group_id) !== groupId) {
      const made = await movePartners(tx, ctx, [
        {
          ppId: Number(pp.id),
          fromGroupId: Number(pp.group_id),
          toGroupId: groupId,
          reason: 'manual',
          ruleId: null,
        },
      ]);
      // The group was deleted between the read and the move (its row lock waited for): not a group now.
      if (made.length === 0) return 'group' as const;
    }
    if (locked !== undefined && locked !== pp.group_locked) await dal.setLocked(tx, Number(pp.id), locked);
    return 'placed' as const;
  });
}
