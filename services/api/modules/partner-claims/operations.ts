// The transactions that claim partner records (rules in service.ts): accepting an invite, following a
// sign-in link, accepting or declining an invitation from the portal. Each locks what it decides on (the
// invite, the link, the account, the record), so a token is used once and a record claimed once however many
// requests race. The session each ends with is made by the caller's `newSession`, in the same transaction.
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import { HttpError } from '../../../../shared/http/server.ts';
import { hashSecret } from '../../../../shared/domain/secrets.ts';
import { hashPassword, verifyPassword } from '../../../../shared/domain/passwords.ts';
import * as auth from '../partner-auth/dal.ts';
import type { AccountRow } from '../partner-auth/dal.ts';
import { ERR as AUTH_ERR, cleanName, normalEmail, passwordError } from '../partner-auth/service.ts';
import * as dal from './dal.ts';
import { ERR, firstMailboxProof, inviteAccountRule, mailboxVerified } from './service.ts';

export interface Signed<S> {
  account: AccountRow;
  session: S;
}

/**
 * Accepting an invite: claims its record for the account of the invite's email (created if missing), which
 * it verifies. `limit` takes the sign-in limit of the email before a password is checked; its answer is
 * told when the password was right.
 */
export function acceptInvite<S>(
  sql: Sql,
  b: { token: string; password?: string | null; name?: string | null },
  hooks: {
    limit: (email: string) => Promise<{ succeeded(): Promise<void> }>;
    newSession: (tx: Tx, accountId: number) => Promise<S>;
  },
): Promise<Signed<S>> {
  return sql.begin(async (tx) => {
    const invite = await auth.lockInvite(tx, hashSecret(b.token));
    if (!invite || invite.used_at || invite.revoked_at || invite.expires_at.getTime() <= Date.now()) {
      throw new HttpError(400, AUTH_ERR.invite);
    }
    const email = normalEmail(invite.partner_email);
    let account = await auth.accountByEmail(tx, email, true);
    const rule = inviteAccountRule(account);
    if (rule.kind === 'create' || rule.kind === 'take-over') {
      const problem = passwordError(b.password);
      if (problem !== null) throw new HttpError(400, problem);
    }
    if (rule.kind === 'create') {
      account = await auth.insertAccount(tx, {
        email,
        name: cleanName(b.name) ?? invite.partner_name,
        passwordHash: await hashPassword(b.password!),
        verified: 'invite',
      });
      if (!account) throw new HttpError(409, 'The account was created meanwhile; retry');
    } else if (rule.kind === 'take-over') {
      // Whoever typed this address into an application form loses the account to the invite's recipient.
      account = await auth.markInviteVerified(tx, Number(account!.id), await hashPassword(b.password!));
      await auth.revokeOtherSessions(tx, Number(account.id), null);
    } else if (rule.kind === 'check-password') {
      const attempt = await hooks.limit(email);
      if (typeof b.password !== 'string' || !(await verifyPassword(b.password, rule.hash))) {
        throw new HttpError(401, AUTH_ERR.credentials);
      }
      await attempt.succeeded();
    } else {
      throw new HttpError(409, AUTH_ERR.inviteNeedsMagicLink);
    }
    const id = Number(account!.id);
    await auth.useInvite(tx, invite.id);
    await auth.claim(tx, id, [Number(invite.partner_id)], 'invite');
    return { account: (await auth.accountById(tx, id))!, session: await hooks.newSession(tx, id) };
  });
}

/**
 * Following a sign-in link: signs in to the account of its email (created if missing), whose mailbox it
 * proves; the first proof undoes what was set up without it (service.ts firstMailboxProof). A link mailed
 * after an application claims the record that application created, if the record still has that email.
 */
export function followMagicLink<S>(
  sql: Sql,
  token: string,
  hooks: { newSession: (tx: Tx, accountId: number) => Promise<S> },
): Promise<Signed<S>> {
  return sql.begin(async (tx) => {
    const link = await auth.lockMagicLink(tx, hashSecret(token));
    if (!link || link.used_at || link.expires_at.getTime() <= Date.now()) {
      throw new HttpError(400, AUTH_ERR.magicLink);
    }
    await auth.useMagicLink(tx, link.id);
    const email = normalEmail(link.email);
    const account =
      (await auth.accountByEmail(tx, email, true)) ??
      (await auth.insertAccount(tx, { email, name: null, passwordHash: null, verified: 'mailbox' })) ??
      (await auth.accountByEmail(tx, email, true))!;
    const id = Number(account.id);
    if (firstMailboxProof(account)) {
      await auth.markMailboxVerified(tx, id, account.password_hash !== null);
      if (account.password_hash !== null) await auth.revokeOtherSessions(tx, id, null);
      await dal.dropInviteClaims(tx, id);
    }
    if (link.claim_partner_id !== null) {
      const target = Number(link.claim_partner_id);
      const recordEmail = await dal.recordEmail(tx, target);
      if (recordEmail !== undefined && normalEmail(recordEmail) === email) {
        await auth.claim(tx, id, [target], 'application');
      }
    }
    return { account: (await auth.accountById(tx, id))!, session: await hooks.newSession(tx, id) };
  });
}

/** The account's invitations: none until its mailbox is verified (service.ts firstMailboxProof). */
export async function invitations(sql: Sql, accountId: number) {
  const account = await auth.accountById(sql, accountId);
  if (!account) throw new HttpError(401, AUTH_ERR.session);
  return mailboxVerified(account) ? dal.invitationsOf(sql, accountId, account.email) : [];
}

/**
 * Accepts (claims) or declines one invitation. 404 when the record is not an invitation of the account (not
 * its email, claimed by anyone, declined already, in no live program, or the account's mailbox is not
 * verified, so it has no invitations yet).
 */
export function answerInvitation(
  sql: Sql,
  accountId: number,
  partnerId: number,
  answer: 'accept' | 'decline',
): Promise<dal.InvitationRow> {
  return sql.begin(async (tx) => {
    const account = await auth.accountById(tx, accountId);
    if (!account) throw new HttpError(401, AUTH_ERR.session);
    if (!mailboxVerified(account)) throw new HttpError(404, ERR.invitationNotFound);
    // A malformed path id (NaN, shared/http/validation.ts) is an unknown invitation.
    if (!Number.isSafeInteger(partnerId)) throw new HttpError(404, ERR.invitationNotFound);
    await dal.lockRecord(tx, partnerId);
    const [invitation] = await dal.invitationsOf(tx, accountId, account.email, partnerId);
    if (!invitation) throw new HttpError(404, ERR.invitationNotFound);
    if (answer === 'accept') await auth.claim(tx, accountId, [partnerId], 'invitation');
    else await dal.declineInvitation(tx, accountId, partnerId);
    return invitation;
  });
}
