// SQL of groups: list, read, create, change and (softly) delete a program's groups, where partners are, and
// a partner's own policy. The default group's commission is programs.commission (0026_rewards.sql).
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import type { CommissionPolicy } from '../../../../shared/domain/commission-policy.ts';
// Creating and changing a group is shared with the importers (shared/rewards/groups.ts).
export { insertGroup, updateGroup } from '../../../../shared/rewards/groups.ts';
export type { GroupFields } from '../../../../shared/rewards/groups.ts';

export interface GroupRow {
  id: string;
  program_id: string;
  name: string;
  slug: string;
  is_default: boolean;
  commission: unknown;
  program_commission: unknown;
  hold_days: number | null;
  auto_approve: boolean | null;
  discount: unknown;
  partners: string;
  created_at: Date;
}

const SELECT = (db: Sql | Tx) => db`
  select g.id, g.program_id, g.name, g.slug, g.is_default, g.commission, p.commission as program_commission,
         g.hold_days, g.auto_approve, g.discount, g.created_at,
         (select count(*) from partner_programs pp where pp.group_id = g.id)::text as partners
  from program_groups g join programs p on p.id = g.program_id`;

/** The program's live groups, the default first. */
export function groupsOf(db: Sql | Tx, programId: number) {
  return db<GroupRow[]>`
    ${SELECT(db)} where g.program_id = ${programId} and g.deleted_at is null
    order by g.is_default desc, g.id`;
}

/** The live group of the program with this id (undefined: none, or another program's). */
export async function groupOf(db: Sql | Tx, programId: number, groupId: number) {
  if (!Number.isSafeInteger(groupId)) return undefined;
  const [row] = await db<GroupRow[]>`
    ${SELECT(db)} where g.id = ${groupId} and g.program_id = ${programId} and g.deleted_at is null`;
  return row;
}

/** The live group of the program with this slug. */
export async function groupBySlug(db: Sql | Tx, programId: number, slug: string) {
  const [row] = await db<
    { id: string; auto_approve: boolean | null; commission: unknown; hold_days: number | null }[]
  >`
    select id, auto_approve, commission, hold_days from program_groups
    where program_id = ${programId} and slug = ${slug} and deleted_at is null`;
  return row;
}

/** The group, locked for a change (undefined: none live in the program). */
export async function lockGroup(tx: Tx, programId: number, groupId: number) {
  if (!Number.isSafeInteger(groupId)) return undefined;
  const [row] = await tx<{ id: string; is_default: boolean }[]>`
    select id, is_default from program_groups
    where id = ${groupId} and program_id = ${programId} and deleted_at is null
    for update`;
  return row;
}

/** The program's policy as stored. */
export async function programPolicy(db: Sql | Tx, programId: number): Promise<unknown> {
  const [row] = await db<{ commission: unknown }[]>`select commission from programs where id = ${programId}`;
  return row?.commission;
}

/** The program's default group's id. */
export async function defaultGroupOf(db: Sql | Tx, programId: number): Promise<number> {
  const [row] = await db<{ id: string }[]>`
    select id from program_groups where program_id = ${programId} and is_default`;
  return Number(row!.id);
}

/** The partner-programs in the group. */
export async function membersOf(tx: Tx, groupId: number): Promise<number[]> {
  const rows = await tx<{ id: string }[]>`
    select id from partner_programs where group_id = ${groupId} order by id`;
  return rows.map((r) => Number(r.id));
}

/**
 * What deleting a group leaves behind: it is kept (its commissions name it) but no longer live; the tier
 * rules from or to it go; customers pinned to it follow their partner's group; bonuses stop naming it.
 */
export async function retireGroup(tx: Tx, groupId: number): Promise<void> {
  await tx`update program_groups set deleted_at = now(), updated_at = now() where id = ${groupId}`;
  await tx`delete from tier_rules where from_group_id = ${groupId} or to_group_id = ${groupId}`;
  await tx`update partner_customers set pinned_group_id = null where pinned_group_id = ${groupId}`;
  await tx`
    update bonuses set group_ids = array_remove(group_ids, ${groupId}::bigint)
    where ${groupId}::bigint = any(group_ids)`;
}

/** The partner-program of the partner in the program, locked, with its group (undefined: not in it). */
export async function lockMembership(tx: Tx, programId: number, partnerId: number) {
  if (!Number.isSafeInteger(partnerId)) return undefined;
  const [row] = await tx<{ id: string; group_id: string; group_locked: boolean }[]>`
    select id, group_id, group_locked from partner_programs
    where program_id = ${programId} and partner_id = ${partnerId}
    for no key update`;
  return row;
}

export async function setLocked(tx: Tx, ppId: number, locked: boolean): Promise<void> {
  await tx`update partner_programs set group_locked = ${locked}, updated_at = now() where id = ${ppId}`;
}

/** Sets (or, with null, clears) the partner's own policy in the program; false when it is not in it. */
export async function setOverride(
  db: Sql,
  programId: number,
  partnerId: number,
  policy: CommissionPolicy | null,
): Promise<boolean> {
  if (!Number.isSafeInteger(partnerId)) return false;
  const rows = await db`
    update partner_programs set commission_override = ${policy === null ? null : db.json(policy as never)},
           updated_at = now()
    where program_id = ${programId} and partner_id = ${partnerId}
    returning id`;
  return rows.length > 0;
}
