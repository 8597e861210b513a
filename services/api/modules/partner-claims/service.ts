// Who may claim a partner record, pure (CONTRACT part three "Who may see and change what"; docs/security.md
// "Partner accounts and claims"). A claim makes a record's programs, links, money and notifications visible
// to the account, and the account's payout method visible to the record's workspace. It takes proof of the
// mailbox and the person's consent, never the email string alone:
// - accepting an invite to the record (the invite was mailed to the record's email);
// - an application made by an account whose mailbox is verified, for a record the application created;
// - a sign-in link, mailed after an application, for the record that application created;
// - accepting the record from the portal's invitations (a mailbox-verified account of the record's email).
// Everything else a record of the account's email is: an invitation, which its workspace cannot see into.
import type { AccountRow } from '../partner-auth/dal.ts';

export const ERR = {
  unverified:
    'Email address not verified: follow the sign-in link mailed to it (POST /api/partner/auth/magic-link sends one)',
  invitationNotFound: 'Invitation not found',
} as const;

type Verification = Pick<AccountRow, 'email_verified_at' | 'mailbox_verified_at'>;

/** The account may see its claimed records (a sign-in link followed or an invite accepted). */
export const isVerified = (a: Verification) => a.email_verified_at !== null;

/** A sign-in link mailed to the address was followed: the mailbox is the account's. */
export const mailboxVerified = (a: Verification) => a.mailbox_verified_at !== null;

/** What an application does about the account of its email and the record it applied with. */
export type ApplicationClaim =
  /** The applicant is signed in with a mailbox-verified account of this email: the new record is theirs. */
  | { kind: 'claim' }
  /** The record is the account's already (another program of the same workspace). */
  | { kind: 'nothing' }
  /** A sign-in link that claims the new record when followed. */
  | { kind: 'mail-claim-link' }
  /** A plain sign-in link: the record existed before this application, so it claims nothing. */
  | { kind: 'mail-sign-in-link' };

export function applicationClaim(a: {
  /** This application created the partner record (no record of this email in the workspace before). */
  recordCreated: boolean;
  /** The account of the application's email, if any. */
  account: (Verification & { id: string }) | undefined;
  /** The account of the request's partner session, if any. */
  signedIn: number | null;
  /** The account has claimed the record already. */
  alreadyClaimed: boolean;
}): ApplicationClaim {
  if (a.alreadyClaimed) return { kind: 'nothing' };
  if (!a.recordCreated) return { kind: 'mail-sign-in-link' };
  const own = a.account !== undefined && Number(a.account.id) === a.signedIn;
  if (own && mailboxVerified(a.account!)) return { kind: 'claim' };
  return { kind: 'mail-claim-link' };
}

/**
 * The first sign-in link an account follows proves its mailbox. Whatever was set up before that by someone
 * holding only an invite URL (shown to the advertiser too) or a public form is undone: a password set then
 * is cleared and the other sessions end (the owner sets one again with PUT /api/partner/me), and records
 * claimed by accepting an invite then become invitations again, which the owner accepts or declines. So an
 * advertiser who accepted its own invite for someone else's address never keeps a way into the account,
 * nor sees the payout method its owner sets later.
 */
export const firstMailboxProof = (a: Pick<AccountRow, 'mailbox_verified_at'>) =>
  a.mailbox_verified_at === null;

/** What accepting an invite does with the account of the invite's email. */
export type InviteAccountRule =
  /** No account: one is created, verified, with the password given. */
  | { kind: 'create' }
  /** An unverified account (made by an application form): verified, its password replaced, sessions ended. */
  | { kind: 'take-over' }
  /** A verified account with a password: reached only with that password. */
  | { kind: 'check-password'; hash: string }
  /** A verified account without a password (sign-in links only): it accepts from its invitations. */
  | { kind: 'needs-magic-link' };

/**
 * An invite always reaches its recipient: an account nobody verified yet (anyone may type any address into
 * an application form) does not stand in its way. A verified one is reached only by its owner's password,
 * or by a sign-in link, since the invite's URL is shown to the advertiser as well as mailed.
 */
export function inviteAccountRule(
  account: (Verification & Pick<AccountRow, 'password_hash'>) | undefined,
): InviteAccountRule {
  if (!account) return { kind: 'create' };
  if (!isVerified(account)) return { kind: 'take-over' };
  if (account.password_hash !== null) return { kind: 'check-password', hash: account.password_hash };
  return { kind: 'needs-magic-link' };
}

/** A payout method as the change notice shows it: the type and the address or details, mostly hidden. */
export function maskedMethod(m: { type: string; email?: string | null; details?: string | null }): string {
  const label = m.type === 'paypal' ? 'PayPal' : m.type === 'wise' ? 'Wise' : 'Bank transfer';
  if (m.email) {
    const [user = '', domain = ''] = m.email.split('@');
    return `${label} ${user.slice(0, 1)}${'*'.repeat(Math.max(3, user.length - 1))}@${domain}`;
  }
  const d = (m.details ?? '').replace(/\s+/g, '');
  return d.length > 4 ? `${label}, details ending ${d.slice(-4)}` : label;
}
