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
): Promise<{ partner: PartnerRow; pp: PartnerProgramRow } | { currencyConflict: string } | null> {
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
    // A partner's balance is one number (CONTRACT): all its programs share one currency. The program's row
    // is read `for share` so that a concurrent currency change (programs/dal.ts) waits for this join.
    const [program] = await tx<{ currency: string }[]>`
      select currency from programs where id = ${programId} for share`;
    const [other] = await tx<{ currency: string }[]>`
      select pr.currency from partner_programs pp join programs pr on pr.id = pp.program_id
      where pp.partner_id = ${partner.id} and pr.id <> ${programId} and pr.currency <> ${program!.currency}
      limit 1`;
    if (other) return { currencyConflict: other.currency };
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
