// SQL of partners and partner-programs: adding one (by the advertiser, or by an application), listing them,
// and the review (approve / reject) under the partner-program's row lock.
import type { Sql, Tx } from '../../../../shared/db/sql.ts';

export type PartnerStatusValue = 'approved' | 'pending' | 'rejected';

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
export interface PartnerListRow {
  id: string;
  name: string;
  email: string;
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
  group_id: string;
  group_name: string;
  group_slug: string;
  group_locked: boolean;
  commission_override: unknown;
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

const LIST_COLUMNS = (sql: Sql | Tx) => sql`
  p.id, p.name, p.email, pp.id as pp_id, pp.status, pp.rejection_reason, pp.source, pp.application,
  exists (select 1 from partner_claims c where c.partner_id = p.id) as claimed,
  pp.clicks, p.balance_cents, pp.balance_cents as program_balance_cents, pp.created_at as joined_at,
  pp.group_id, g.name as group_name, g.slug as group_slug, pp.group_locked, pp.commission_override`;

export function partnersOfProgram(sql: Sql, programId: number) {
  return sql<PartnerListRow[]>`
    select ${LIST_COLUMNS(sql)}
    from partner_programs pp join partners p on p.id = pp.partner_id join program_groups g on g.id = pp.group_id
    where pp.program_id = ${programId}
    order by pp.id`;
}

export async function partnerOfProgram(sql: Sql | Tx, programId: number, partnerId: number) {
  const [row] = await sql<PartnerListRow[]>`
    select ${LIST_COLUMNS(sql)}
    from partner_programs pp join partners p on p.id = pp.partner_id join program_groups g on g.id = pp.group_id
    where pp.program_id = ${programId} and pp.partner_id = ${partnerId}`;
  return row;
}

/** Whether any account has claimed the partner record (it then needs no invite to see a new program). */
export async function isClaimed(tx: Sql | Tx, partnerId: string | number): Promise<boolean> {
  const [row] = await tx<{ claimed: boolean }[]>`
    select exists (select 1 from partner_claims where partner_id = ${partnerId}) as claimed`;
  return row!.claimed;
}

export interface LockedPartnerProgram {
  id: string;
  status: PartnerStatusValue;
  rejection_reason: string | null;
  partner_name: string;
  partner_email: string;
  program_name: string;
  workspace_id: string;
  created_at: Date;
}

/** The partner-program of the partner in the program, locked for a status change. */
export async function lockPartnerProgram(tx: Tx, programId: number, partnerId: number) {
  const [row] = await tx<LockedPartnerProgram[]>`
    select pp.id, pp.status, pp.rejection_reason, p.name as partner_name, p.email as partner_email,
           pr.name as program_name, pr.workspace_id, pp.created_at
    from partner_programs pp join partners p on p.id = pp.partner_id join programs pr on pr.id = pp.program_id
    where pp.program_id = ${programId} and pp.partner_id = ${partnerId}
    for no key update of pp`;
  return row;
}

/** Sets the status (and reason); returns the new updated_at. Only a real change is written. */
export async function setPartnerStatus(
  tx: Tx,
  ppId: string,
  status: PartnerStatusValue,
  reason: string | null,
): Promise<Date> {
  const [row] = await tx<{ updated_at: Date }[]>`
    update partner_programs set status = ${status}, rejection_reason = ${reason}, updated_at = now()
    where id = ${ppId} returning updated_at`;
  return row!.updated_at;
}

/** How many links the partner-program has. */
export async function linkCountOf(tx: Sql | Tx, ppId: string | number): Promise<number> {
  const [row] = await tx<{ n: number }[]>`
    select count(*)::int as n from referral_links where partner_program_id = ${ppId}`;
  return row!.n;
}
