// The rules of partner accounts and sessions, pure (docs/partners.md): the partner session cookie, the
// error strings and token lifetimes. Who may claim what is partner-claims/service.ts.
import { EMAIL_RE } from '../../../../shared/http/server.ts';
import { iso } from '../../common.ts';
import { TOO_MANY_ATTEMPTS } from '../../sign-in-limits.ts';
import type { AccountRow } from './dal.ts';

export const PARTNER_COOKIE = 'svc_partner_session';
export const INVITE_TTL_MS = 14 * 24 * 3600_000;
export const MAGIC_LINK_TTL_MS = 15 * 60_000;

export const ERR = {
  credentials: 'Invalid email or password',
  loginBody: 'email and password are required',
  email: 'email must be a valid email address',
  password: 'password must be at least 10 characters',
  passwordLong: 'password must be at most 1024 characters',
  name: 'name must be a string of at most 200 characters',
  token: 'token is required',
  invite: 'Invalid or expired invite',
  magicLink: 'Invalid or expired sign-in link',
  inviteNeedsMagicLink:
    'A partner account with this email exists without a password: request a sign-in link to see this program',
  sessionRequired: 'A partner session is required',
  session: 'Invalid or expired session',
  tooMany: TOO_MANY_ATTEMPTS,
  currentPassword: 'current_password is incorrect',
  nothing: 'Nothing to update: give name or password',
} as const;

/** The email as stored and compared: trimmed, lowercased. */
export const normalEmail = (email: string) => email.trim().toLowerCase();

export function emailError(v: unknown): string | null {
  const email = typeof v === 'string' ? v.trim() : '';
  return !EMAIL_RE.test(email) || email.length > 320 ? ERR.email : null;
}

export function passwordError(v: unknown): string | null {
  if (typeof v !== 'string' || v.length < 10) return ERR.password;
  return v.length > 1024 ? ERR.passwordLong : null;
}

/** An optional password: omitted or null is fine, else the password rules. */
export const optionalPasswordError = (v: unknown): string | null =>
  v === undefined || v === null ? null : passwordError(v);

export const optionalNameError = (v: unknown): string | null =>
  v !== undefined && v !== null && (typeof v !== 'string' || v.length > 200) ? ERR.name : null;

/** A trimmed name, null when empty or absent. */
export const cleanName = (v: string | null | undefined): string | null => v?.trim() || null;

/**
 * The Set-Cookie value of a partner session: HttpOnly, SameSite=Lax (CONTRACT; a partner arriving from a
 * link in a mail is already signed in), Path=/ (the partner routes and an application from the public
 * page read it; every other route ignores it), Secure over HTTPS.
 */
export function partnerCookie(token: string, maxAgeSeconds: number, secure: boolean): string {
  return [
    `${PARTNER_COOKIE}=${token}`,
    'HttpOnly',
    'SameSite=Lax',
    'Path=/',
    `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`,
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

export function clearedPartnerCookie(secure: boolean): string {
  return partnerCookie('', 0, secure).replace(
    'Max-Age=0',
    'Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT',
  );
}

export const toAccount = (a: AccountRow) => ({
  id: Number(a.id),
  email: a.email,
  name: a.name,
  has_password: a.password_hash !== null,
  email_verified: a.email_verified_at !== null,
  mailbox_verified: a.mailbox_verified_at !== null,
  created_at: iso(a.created_at)!,
});
