// SQL of partner accounts: accounts by email, sessions by token hash, claims, invites, magic links and
// sign-ins. Every multi-step change (accepting an invite, following a magic link) runs in one transaction
// with the rows it decides on locked, so a token is used once however many requests race for it.
import type { Sql, Tx } from '../../../../shared/db/sql.ts';

export interface AccountRow {
  id: string;
  email: string;
  name: string | null;
  password_hash: string | null;
  /** A sign-in link followed or an invite accepted (partner-claims/service.ts). */
  email_verified_at: Date | null;
  /** A sign-in link mailed to the address followed. */
  mailbox_verified_at: Date | null;
  created_at: Date;
}

const ACCOUNT = (sql: Sql | Tx) =>
  sql`id, email, name, password_hash, email_verified_at, mailbox_verified_at, created_at`;

export async function accountByEmail(sql: Sql | Tx, email: string, lock = false) {
  const [row] = await sql<AccountRow[]>`
    select ${ACCOUNT(sql)} from partner_accounts where lower(email) = lower(${email})
    ${lock ? sql`for no key update` : sql``}`;
  return row;
}

export async function accountById(sql: Sql | Tx, id: number) {
  const [row] = await sql<AccountRow[]>`select ${ACCOUNT(sql)} from partner_accounts where id = ${id}`;
  return row;
}

/**
 * A new account, or undefined when the email already has one (a concurrent request made it). `verified`:
 * 'mailbox' (a sign-in link was followed), 'invite' (an invite was accepted) or false (an application form).
 */
export async function insertAccount(
  tx: Sql | Tx,
  a: {
    email: string;
    name: string | null;
    passwordHash: string | null;
    verified: 'mailbox' | 'invite' | false;
  },
) {
  const [row] = await tx<AccountRow[]>`
    insert into partner_accounts (email, name, password_hash, email_verified_at, mailbox_verified_at)
    values (${a.email}, ${a.name}, ${a.passwordHash}, ${a.verified ? tx`now()` : null},
            ${a.verified === 'mailbox' ? tx`now()` : null})
    on conflict ((lower(email))) do nothing
    returning ${ACCOUNT(tx)}`;
  return row;
}

export async function createSession(sql: Sql | Tx, accountId: number, tokenHash: Buffer, expiresAt: Date) {
  await sql`
    insert into partner_sessions (account_id, token_hash, expires_at)
    values (${accountId}, ${tokenHash}, ${expiresAt})`;
}

/** The live session with this token hash, with whether its account is verified. */
export async function sessionByHash(sql: Sql, hash: Buffer) {
  const [row] = await sql<
    {
      id: string;
      account_id: string;
      expires_at: Date;
      email_verified_at: Date | null;
      mailbox_verified_at: Date | null;
    }[]
  >`
    select s.id, s.account_id, s.expires_at, a.email_verified_at, a.mailbox_verified_at
    from partner_sessions s join partner_accounts a on a.id = s.account_id
    where s.token_hash = ${hash} and s.revoked_at is null and s.expires_at > now()`;
  return row;
}

export async function revokeSession(sql: Sql, sessionId: number): Promise<void> {
  await sql`update partner_sessions set revoked_at = now() where id = ${sessionId} and revoked_at is null`;
}

/** Revokes every live session of the account but `keep` (a password change, a first verification). */
export async function revokeOtherSessions(sql: Sql | Tx, accountId: number, keep: number | null) {
  await sql`
    update partner_sessions set revoked_at = now()
    where account_id = ${accountId} and revoked_at is null ${keep === null ? sql`` : sql`and id <> ${keep}`}`;
}

export async function recordSignIn(sql: Sql | Tx, accountId: number, ipHash: string | null) {
  await sql`insert into partner_sign_ins (account_id, ip_hash) values (${accountId}, ${ipHash})`;
}

/** Claims the partner records (a repeat is a no-op). */
export async function claim(tx: Sql | Tx, accountId: number, partnerIds: number[], via: string) {
  if (partnerIds.length === 0) return;
  await tx`
    insert into partner_claims (account_id, partner_id, via)
    select ${accountId}, unnest(${partnerIds}::bigint[]), ${via}
    on conflict do nothing`;
}

export async function hasClaimed(tx: Sql | Tx, accountId: number, partnerId: number): Promise<boolean> {
  const [row] = await tx<{ ok: boolean }[]>`
    select exists (select 1 from partner_claims where account_id = ${accountId} and partner_id = ${partnerId}) as ok`;
  return row!.ok;
}

/** Whether a partner record with this email exists (magic links are mailed only to known addresses). */
export async function emailKnown(sql: Sql, email: string): Promise<boolean> {
  const [row] = await sql<{ known: boolean }[]>`
    select exists (select 1 from partner_accounts where lower(email) = lower(${email}))
        or exists (select 1 from partners where lower(email) = lower(${email})) as known`;
  return row!.known;
}

// ---- invites ----

export interface InviteRow {
  id: string;
  partner_id: string;
  program_id: string;
  expires_at: Date;
  used_at: Date | null;
  revoked_at: Date | null;
  partner_email: string;
  partner_name: string;
}

/** A new invite of the partner; its older live invites are revoked in the same transaction. */
export async function insertInvite(
  tx: Tx,
  i: { partnerId: number; programId: number; tokenHash: Buffer; expiresAt: Date },
) {
  await tx`
    update partner_invites set revoked_at = now()
    where partner_id = ${i.partnerId} and used_at is null and revoked_at is null`;
  const [row] = await tx<{ id: string; expires_at: Date }[]>`
    insert into partner_invites (partner_id, program_id, token_hash, expires_at)
    values (${i.partnerId}, ${i.programId}, ${i.tokenHash}, ${i.expiresAt})
    returning id, expires_at`;
  return row!;
}

/** The invite with this token hash, locked, with its partner's email and name. */
export async function lockInvite(tx: Tx, hash: Buffer) {
  const [row] = await tx<InviteRow[]>`
    select i.id, i.partner_id, i.program_id, i.expires_at, i.used_at, i.revoked_at,
           p.email as partner_email, p.name as partner_name
    from partner_invites i join partners p on p.id = i.partner_id
    where i.token_hash = ${hash}
    for no key update of i`;
  return row;
}

export async function useInvite(tx: Tx, id: string) {
  await tx`update partner_invites set used_at = now() where id = ${id}`;
}

// ---- magic links ----

/** A sign-in link; `claimPartnerId`: the record an application created, which following it claims. */
export async function insertMagicLink(
  tx: Tx,
  email: string,
  tokenHash: Buffer,
  expiresAt: Date,
  claimPartnerId: number | null = null,
) {
  // Used and expired links of this address are of no use to anyone: keep the table small.
  await tx`
    delete from partner_magic_links
    where lower(email) = lower(${email}) and (used_at is not null or expires_at < now() - interval '1 day')`;
  const [row] = await tx<{ id: string }[]>`
    insert into partner_magic_links (email, token_hash, expires_at, claim_partner_id)
    values (${email}, ${tokenHash}, ${expiresAt}, ${claimPartnerId}) returning id`;
  return Number(row!.id);
}

export async function lockMagicLink(tx: Tx, hash: Buffer) {
  const [row] = await tx<
    {
      id: string;
      email: string;
      expires_at: Date;
      used_at: Date | null;
      claim_partner_id: string | null;
    }[]
  >`
    select id, email, expires_at, used_at, claim_partner_id from partner_magic_links
    where token_hash = ${hash} for no key update`;
  return row;
}

export async function useMagicLink(tx: Tx, id: string) {
  await tx`update partner_magic_links set used_at = now() where id = ${id}`;
}

/** The account's mailbox is proven (a sign-in link was followed); optionally its password is cleared. */
export async function markMailboxVerified(tx: Tx, accountId: number, clearPassword: boolean) {
  await tx`
    update partner_accounts set
      email_verified_at = coalesce(email_verified_at, now()),
      mailbox_verified_at = coalesce(mailbox_verified_at, now()),
      password_hash = ${clearPassword ? null : tx`password_hash`},
      updated_at = now()
    where id = ${accountId}`;
}

/** An invite was accepted: the account is verified, with the password given (an unverified one's replaced). */
export async function markInviteVerified(tx: Tx, accountId: number, passwordHash: string | null) {
  const [row] = await tx<AccountRow[]>`
    update partner_accounts set
      email_verified_at = coalesce(email_verified_at, now()),
      password_hash = ${passwordHash === null ? tx`password_hash` : passwordHash},
      updated_at = now()
    where id = ${accountId}
    returning ${ACCOUNT(tx)}`;
  return row!;
}

export async function updateAccount(
  sql: Sql | Tx,
  accountId: number,
  f: { name?: string | null; passwordHash?: string },
) {
  const [row] = await sql<AccountRow[]>`
    update partner_accounts set
      name = ${f.name === undefined ? sql`name` : f.name},
      password_hash = ${f.passwordHash === undefined ? sql`password_hash` : f.passwordHash},
      updated_at = now()
    where id = ${accountId}
    returning ${ACCOUNT(sql)}`;
  return row;
}

/**
 * Replaces the account's password hash with `next` only if it is still `previous` (a hash of an older kind,
 * upgraded at sign-in): a password changed or cleared meanwhile stays as it is. True when replaced.
 */
export async function replacePasswordHash(sql: Sql | Tx, accountId: number, previous: string, next: string) {
  const rows = await sql`
    update partner_accounts set password_hash = ${next}, updated_at = now()
    where id = ${accountId} and password_hash = ${previous}`;
  return rows.count === 1;
}

/** What GET /api/partner/me shows: the account's claimed records with their workspaces. */
export function claimedRecords(sql: Sql, accountId: number) {
  return sql<
    {
      id: string;
      name: string;
      email: string;
      workspace_id: string | null;
      workspace_name: string | null;
      via: string;
      claimed_at: Date;
    }[]
  >`
    select p.id, p.name, p.email, p.workspace_id, w.name as workspace_name, c.via, c.created_at as claimed_at
    from partner_claims c join partners p on p.id = c.partner_id
    left join workspaces w on w.id = p.workspace_id
    where c.account_id = ${accountId}
    order by c.created_at, p.id`;
}
