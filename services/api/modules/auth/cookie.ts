// The dashboard's session cookie and its CSRF defence (docs/dashboard.md "Session and CSRF"), pure.
// The cookie `svc_session` holds the same `sess_` token the Authorization header would; HttpOnly keeps it
// from page scripts, SameSite=Strict from cross-site requests. A cookie-authenticated state-changing request
// must also carry `X-CSRF-Token`, a value derived from the session token (nothing new is stored; script on
// another origin can read neither the cookie nor the token, so it cannot compute or send it).
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SESSION_COOKIE = 'svc_session';
export const CSRF_HEADER = 'x-csrf-token';
export const CSRF_ERROR = 'CSRF token missing or invalid';
const CSRF_LABEL = 'svc dashboard csrf v1';

/** Methods that change nothing, so need no CSRF token. */
export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The value of cookie `name` in a Cookie header (RFC 6265 `name=value; name2=value2`), the first one when
 * repeated; undefined when absent or empty. Quotes around the value are removed; the value is not
 * percent-decoded (tokens are base64url).
 */
export function readCookie(header: string | string[] | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  const text = Array.isArray(header) ? header.join('; ') : header;
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    return value === '' ? undefined : value;
  }
  return undefined;
}

/** The CSRF token of a session: HMAC-SHA-256 keyed by the session token over a fixed label. */
export function csrfTokenFor(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update(CSRF_LABEL).digest('base64url');
}

/** Whether `given` is the CSRF token of `sessionToken` (constant time). */
export function csrfMatches(sessionToken: string, given: string | string[] | undefined): boolean {
  if (typeof given !== 'string') return false;
  const want = Buffer.from(csrfTokenFor(sessionToken));
  const got = Buffer.from(given.trim());
  return got.length === want.length && timingSafeEqual(got, want);
}

/** The Set-Cookie value that stores `token` for `maxAgeSeconds` (Secure when the request came over HTTPS). */
export function sessionCookie(token: string, maxAgeSeconds: number, secure: boolean): string {
  return [
    `${SESSION_COOKIE}=${token}`,
    'HttpOnly',
    'SameSite=Strict',
    'Path=/',
    `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`,
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

/** The Set-Cookie value that removes the session cookie. */
export function clearedSessionCookie(secure: boolean): string {
  return sessionCookie('', 0, secure).replace(
    'Max-Age=0',
    'Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT',
  );
}
