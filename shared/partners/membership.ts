// Adding a partner to a program (CONTRACT "Partners, links, commissions, balances"; docs/partners.md): one
// partner per (workspace, email) and one partner-program per program, in the caller's transaction. The
// partners API (services/api/modules/partners) and the importers (shared/importing) add partners with it.
import type { Tx } from '../db/sql.ts';

import type { PartnerStatusValue } from '../domain/statuses.ts';

export type { PartnerStatusValue };

export interface PartnerRow {
  id: string;
  name: string;
  email: string;
}
export interface PartnerProgramRow {
  id: string;
  status: PartnerStatusValue;
  created_at: Date;
  updated_at: Date;
}

export interface NewPartner {
  name: string;
  email: string;
  status: string;
  source?: 'advertiser' | 'application';
  application?: { website: string | null; message: string | null } | null;
  /** The group it joins (null: the default group). */
  groupId?: number | null;
}

/**
 * The workspace's partner with this email (created with `name` if none) joined to the program, in the
 * caller's transaction (operations.ts); `existing` when it is already in the program. One partner per
 * (workspace, email) even when two requests race: an advisory lock stands in for the unique index there is
 * not.
 */
export async function addPartner(
  tx: Tx,
  workspaceId: number,
  programId: number,
  p: NewPartner,
): Promise<
  | { partner: PartnerRow; pp: PartnerProgramRow; recordCreated: boolean }
  | { currencyConflict: string }
  | { existing: PartnerRow & { status: PartnerStatusValue } }
  | { badGroup: true }
> {
  // The group named must be a live one of the program, share-locked: a deletion of it waits, or has won.
  const groupId = p.groupId ?? null;
  if (groupId !== null) {
    const [group] = await tx`
      select id from program_groups
      where id = ${groupId} and program_id = ${programId} and deleted_at is null for share`;
    if (!group) return { badGroup: true };
  }
  await tx`select pg_advisory_xact_lock(hashtextextended(${`partner:${workspaceId}:${p.email}`}, 0))`;
  let [partner] = await tx<PartnerRow[]>`
    select id, name, email from partners
    where workspace_id = ${workspaceId} and email = ${p.email} order by id limit 1`;
  const recordCreated = partner === undefined;
  partner ??= (
    await tx<PartnerRow[]>`
      insert into partners (workspace_id, name, email) values (${workspaceId}, ${p.name}, ${p.email})
      returning id, name, email`
  )[0]!;
  // A partner's balance is one number (CONTRACT): all its programs share one currency. The program's row
  // is read `for share` so that a concurrent currency change (programs/dal.ts) waits for this join.
  const [program] = await tx<{ currency: string }[]>`
    select currency from programs where id = ${programId} for share`;
  const [pp] = await tx<PartnerProgramRow[]>`
    insert into partner_programs (partner_id, program_id, status, source, application, group_id)
    select ${partner.id}, ${programId}, ${p.status}, ${p.source ?? 'advertiser'},
           ${p.application ? tx.json(p.application as never) : null}, ${groupId}::bigint
    where not exists (
      select 1 from partner_programs pp join programs pr on pr.id = pp.program_id
      where pp.partner_id = ${partner.id} and pr.id <> ${programId} and pr.currency <> ${program!.currency})
    on conflict (partner_id, program_id) do nothing
    returning id, status, created_at, updated_at`;
  if (!pp) {
    const [cur] = await tx<{ status: PartnerStatusValue }[]>`
      select status from partner_programs where partner_id = ${partner.id} and program_id = ${programId}`;
    if (cur) return { existing: { ...partner, status: cur.status } };
    const [other] = await tx<{ currency: string }[]>`
      select pr.currency from partner_programs pp join programs pr on pr.id = pp.program_id
      where pp.partner_id = ${partner.id} and pr.id <> ${programId} and pr.currency <> ${program!.currency}
      limit 1`;
    return { currencyConflict: other!.currency };
  }
  return { partner, pp, recordCreated };
}
