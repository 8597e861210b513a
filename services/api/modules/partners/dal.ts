// SQL of partners and partner-programs.
import type { Sql } from '../../../../shared/db/sql.ts';

export interface PartnerRow {
  id: string;
  name: string;
  email: string;
}
export interface PartnerProgramRow {
  id: string;
  status: 'approved' | 'pending';
  created_at: Date;
}
export interface PartnerListRow {
  id: string;
  name: string;
  email: string;
  pp_id: string;
  status: 'approved' | 'pending';
  clicks: string;
  balance_cents: string;
  program_balance_cents: string;
  joined_at: Date;
}

/**
 * The workspace's partner with this email (created with `name` if none) joined to the program; null when
 * it is already in the program. One partner per (workspace, email) even when two requests race: an
 * advisory lock stands in for the unique index there is not.
 */
export function addPartner(
  sql: Sql,
  workspaceId: number,
  programId: number,
  p: { name: string; email: string; status: string },
) {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtextextended(${`partner:${workspaceId}:${p.email}`}, 0))`;
    let [partner] = await tx<PartnerRow[]>`
      select id, name, email from partners
      where workspace_id = ${workspaceId} and email = ${p.email} order by id limit 1`;
    partner ??= (
      await tx<PartnerRow[]>`
        insert into partners (workspace_id, name, email) values (${workspaceId}, ${p.name}, ${p.email})
        returning id, name, email`
    )[0]!;
    const [pp] = await tx<PartnerProgramRow[]>`
      insert into partner_programs (partner_id, program_id, status)
      values (${partner.id}, ${programId}, ${p.status})
      on conflict (partner_id, program_id) do nothing
      returning id, status, created_at`;
    return pp ? { partner, pp } : null;
  });
}

export function partnersOfProgram(sql: Sql, programId: number) {
  return sql<PartnerListRow[]>`
    select p.id, p.name, p.email, pp.id as pp_id, pp.status, pp.clicks, p.balance_cents,
           pp.balance_cents as program_balance_cents, pp.created_at as joined_at
    from partner_programs pp join partners p on p.id = pp.partner_id
    where pp.program_id = ${programId}
    order by pp.id`;
}
