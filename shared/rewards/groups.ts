// Writing a program's groups (CONTRACT part four "Groups"; docs/rewards.md), in the caller's transaction:
// the groups API (services/api/modules/groups) and the importers (shared/importing) create and change
// groups with these, so a group is written one way whoever writes it. The default group's commission is
// programs.commission (0026_rewards.sql): a change of it goes to the program.
import type { Sql, Tx } from '../db/sql.ts';
import type { CommissionPolicy } from '../domain/commission-policy.ts';
import type { Discount } from '../domain/discount.ts';
import { slugify } from '../domain/slug.ts';

export interface GroupFields {
  name?: string;
  slug?: string;
  commission?: CommissionPolicy;
  hold_days?: number | null;
  auto_approve?: boolean | null;
  /** null clears it. */
  discount?: Discount | null;
}

/** The slugs a new group tries in order: the given one, or the name's and a few with a number after it. */
export function groupSlugCandidates(slug: string | undefined, name: string): string[] {
  if (slug !== undefined) return [slug];
  const base = slugify(name).slice(0, 36).replace(/-+$/, '') || 'group';
  return [base, ...Array.from({ length: 8 }, (_, i) => `${base}-${i + 2}`)];
}

/** The new group, or undefined when the slug is taken in the program. */
export async function insertGroup(
  tx: Tx,
  programId: number,
  f: Required<Pick<GroupFields, 'name' | 'slug'>> & GroupFields,
): Promise<string | undefined> {
  const [row] = await tx<{ id: string }[]>`
    insert into program_groups (program_id, name, slug, commission, hold_days, auto_approve, discount)
    values (${programId}, ${f.name}, ${f.slug},
            ${f.commission === undefined ? null : tx.json(f.commission as never)},
            ${f.hold_days ?? null}, ${f.auto_approve ?? null},
            ${f.discount ? tx.json(f.discount as never) : null})
    on conflict (program_id, slug) where deleted_at is null do nothing
    returning id`;
  return row?.id;
}

/** The new group's id, with the first of `slugs` free in the program; 'taken' when none is. */
export async function createGroupIn(
  tx: Tx,
  programId: number,
  f: GroupFields & { name: string },
  slugs: string[],
): Promise<string | 'taken'> {
  for (const slug of slugs) {
    const id = await insertGroup(tx, programId, { ...f, slug });
    if (id) return id;
  }
  return 'taken';
}

/**
 * Changes the fields given (`commission` of the default group goes to the program, whose policy it is).
 * Throws the unique violation on slug.
 */
export async function updateGroup(tx: Tx | Sql, groupId: number, isDefault: boolean, f: GroupFields) {
  const commission = f.commission === undefined ? null : tx.json(f.commission as never);
  await tx`
    update program_groups set
      name = coalesce(${f.name ?? null}::text, name),
      slug = coalesce(${f.slug ?? null}::text, slug),
      commission = case when ${!isDefault && f.commission !== undefined} then ${commission}::jsonb else commission end,
      hold_days = case when ${f.hold_days !== undefined} then ${f.hold_days ?? null}::integer else hold_days end,
      auto_approve = case when ${f.auto_approve !== undefined} then ${f.auto_approve ?? null}::boolean
                          else auto_approve end,
      discount = case when ${f.discount !== undefined} then ${f.discount ? tx.json(f.discount as never) : null}::jsonb
                      else discount end,
      updated_at = now()
    where id = ${groupId}`;
  if (isDefault && f.commission !== undefined) {
    await tx`
      update programs set commission = ${commission}::jsonb, updated_at = now()
      where id = (select program_id from program_groups where id = ${groupId})`;
  }
}
