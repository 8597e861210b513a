// SQL of referral links. Writing the row is enough for the ingress to see it: triggers on referral_links
// and partner_programs feed its cache.
import type { Sql, Tx } from '../../../../shared/db/sql.ts';

export interface LinkRow {
  id: string;
  short_link: string;
  status: 'active' | 'inactive';
  clicks: string;
  last_clicked: Date | null;
}

/** The partner-program of the partner in the program, if it joined. */
export async function findPartnerProgram(sql: Sql, programId: number, partnerId: number) {
  const [pp] = await sql<{ id: string }[]>`
    select id from partner_programs where program_id = ${programId} and partner_id = ${partnerId}`;
  return pp ? Number(pp.id) : undefined;
}

/** The new link, or undefined when the short link is taken. */
export async function insertLink(
  sql: Sql | Tx,
  l: { shortLink: string; programId: number; partnerId: number; partnerProgramId: number },
): Promise<LinkRow | undefined> {
  const [row] = await sql<LinkRow[]>`
    insert into referral_links (short_link, program_id, partner_id, partner_program_id)
    values (${l.shortLink}, ${l.programId}, ${l.partnerId}, ${l.partnerProgramId})
    on conflict (short_link) do nothing
    returning id, short_link, status, clicks, last_clicked`;
  return row;
}

export function linksOfPartner(sql: Sql, programId: number, partnerId: number) {
  return sql<LinkRow[]>`
    select id, short_link, status, clicks, last_clicked from referral_links
    where program_id = ${programId} and partner_id = ${partnerId}
    order by id`;
}

/**
 * Sets the link's status and returns it; undefined when there is no such link. Only a real change is
 * written: the trigger logs a cache invalidation for every update of status.
 */
export async function setLinkStatus(
  sql: Sql,
  l: { linkId: number; programId: number; partnerId: number; status: string },
): Promise<LinkRow | undefined> {
  const [row] = await sql<LinkRow[]>`
    with cur as (
      select id, status from referral_links
      where id = ${l.linkId} and program_id = ${l.programId} and partner_id = ${l.partnerId}
    ), upd as (
      update referral_links r set status = ${l.status}, updated_at = now()
      from cur where r.id = cur.id and cur.status <> ${l.status}
      returning r.id, r.short_link, r.status, r.clicks, r.last_clicked
    )
    select * from upd
    union all
    select r.id, r.short_link, r.status, r.clicks, r.last_clicked
    from referral_links r join cur on cur.id = r.id
    where not exists (select 1 from upd)`;
  return row;
}
