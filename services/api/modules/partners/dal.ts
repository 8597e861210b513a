// SQL of partners and partner-programs: adding one (by the advertiser, or by an application), listing them,
// and the review (approve / reject) under the partner-program's row lock.
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import type { PartnerStatusValue } from '../../../../shared/partners/membership.ts';
import type { PartnerViewRow } from '../../../../shared/views/partner.ts';
// Adding a partner is shared with the importers (shared/partners/membership.ts).
export { addPartner } from '../../../../shared/partners/membership.ts';
export type {
  NewPartner,
  PartnerProgramRow,
  PartnerRow,
  PartnerStatusValue,
} from '../../../../shared/partners/membership.ts';

/** A partner in a program as its view reads it (shared/views/partner.ts). */
export type PartnerListRow = PartnerViewRow;

const LIST_COLUMNS = (sql: Sql | Tx) => sql`
  p.id, p.name, p.email, pp.program_id, pp.id as pp_id, pp.status, pp.rejection_reason, pp.source,
  pp.application, exists (select 1 from partner_claims c where c.partner_id = p.id) as claimed,
  pp.clicks, p.balance_cents, pp.balance_cents as program_balance_cents, pp.created_at as joined_at,
  pp.updated_at, pp.group_id, g.name as group_name, g.slug as group_slug, pp.group_locked,
  pp.commission_override`;

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
