// SQL of claims beyond the claim itself (partner-auth/dal.ts `claim`): the invitations an account sees (the
// records of its email that nobody claimed and it did not decline), declining one, and undoing the claims
// an unproven account made by accepting invites (service.ts firstMailboxProof).
import type { Sql, Tx } from '../../../../shared/db/sql.ts';

export interface InvitationRow {
  partner_id: string;
  workspace_name: string | null;
  programs: { id: number; name: string; commission: unknown; currency: string }[];
}

/**
 * The invitations of an account: partner records with its email (case-insensitive) that no account has
 * claimed and this one has not declined, each with its live programs. `partnerId` narrows it to one record,
 * locked for the claim (`for update` of the record).
 */
export function invitationsOf(sql: Sql | Tx, accountId: number, email: string, partnerId?: number) {
  return sql<InvitationRow[]>`
    select p.id as partner_id, w.name as workspace_name,
           coalesce(json_agg(json_build_object('id', pr.id, 'name', pr.name, 'commission', pr.commission,
                                               'currency', pr.currency)
                             order by pr.id) filter (where pr.id is not null), '[]') as programs
    from partners p
    left join workspaces w on w.id = p.workspace_id
    left join partner_programs pp on pp.partner_id = p.id
    left join programs pr on pr.id = pp.program_id and pr.deleted_at is null
    where lower(p.email) = lower(${email})
      ${partnerId === undefined ? sql`` : sql`and p.id = ${partnerId}`}
      and not exists (select 1 from partner_claims c where c.partner_id = p.id)
      and not exists (select 1 from partner_invitation_declines d
                      where d.partner_id = p.id and d.account_id = ${accountId})
    group by p.id, w.name
    having count(pr.id) > 0
    order by p.id`;
}

/** Locks the partner record (an invitation being accepted or declined by two requests at once). */
export async function lockRecord(tx: Tx, partnerId: number): Promise<void> {
  await tx`select id from partners where id = ${partnerId} for no key update`;
}

export async function declineInvitation(tx: Tx, accountId: number, partnerId: number): Promise<void> {
  await tx`
    insert into partner_invitation_declines (account_id, partner_id) values (${accountId}, ${partnerId})
    on conflict do nothing`;
}

/** The records the account claimed by accepting invites (before its mailbox was proven): unclaimed again. */
export async function dropInviteClaims(tx: Tx, accountId: number): Promise<number> {
  const rows = await tx`
    delete from partner_claims where account_id = ${accountId} and via = 'invite' returning partner_id`;
  return rows.length;
}

/** The record's email, compared with a sign-in link's when the link claims it. */
export async function recordEmail(tx: Tx, partnerId: number): Promise<string | undefined> {
  const [row] = await tx<{ email: string }[]>`select email from partners where id = ${partnerId}`;
  return row?.email;
}
