// Who is calling a partner route (/api/partner/*), and the rate limits of the routes that sign partners in.
// Only a `psess_` partner session reaches these routes: from `Authorization: Bearer psess_…`, or without an
// Authorization header from the `svc_partner_session` cookie (which then needs the X-CSRF-Token of the
// dashboard's rule on every request but GET/HEAD/OPTIONS). Any other credential (aff_, affk_, sess_, the
// dashboard's svc_session cookie) is 401, and a psess_ token is 401 everywhere else (the dashboard's
// authenticate accepts only sess_ and affk_).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Sql } from '../../../../shared/db/sql.ts';
import { HttpError } from '../../../../shared/http/server.ts';
import { hashSecret } from '../../../../shared/domain/secrets.ts';
import { createHash } from 'node:crypto';
import { takeToken } from '../../../../shared/db/rate-limits.ts';
import { loadIpHasher } from '../../../../shared/domain/ip-hash.ts';
import type { IpHasher } from '../../../../shared/domain/ip-hash.ts';
import { CSRF_ERROR, CSRF_HEADER, SAFE_METHODS, csrfMatches, readCookie } from '../auth/cookie.ts';
import { sessionByHash } from './dal.ts';
import { ERR, PARTNER_COOKIE, normalEmail } from './service.ts';
import { ERR as CLAIMS_ERR } from '../partner-claims/service.ts';
import type { ApiDeps } from '../../deps.ts';

/** The OpenAPI security of partner routes: a Bearer partner session, or the portal's cookie. */
export const partnerSecurity: Record<string, string[]>[] = [
  { partnerSession: [] },
  { partnerSessionCookie: [] },
];

export interface PartnerPrincipal {
  accountId: number;
  sessionId: number;
  /** The session token (the CSRF token is derived from it). */
  token: string;
  via: 'header' | 'cookie';
  /** A sign-in link followed or an invite accepted: the account may see its claimed records. */
  verified: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    partner?: PartnerPrincipal;
  }
  interface FastifyContextConfig {
    /** A partner route an unverified account may call (its own account: GET/PUT /api/partner/me). */
    unverifiedPartner?: boolean;
  }
}

/** The request's partner token: a Bearer psess_ header, or (no header at all) the partner cookie. */
export function partnerCredentialOf(req: Pick<FastifyRequest, 'headers'>): {
  token: string;
  via: 'header' | 'cookie';
} {
  const header = req.headers.authorization;
  if (header === undefined) {
    const cookie = readCookie(req.headers.cookie, PARTNER_COOKIE);
    if (cookie === undefined) throw new HttpError(401, ERR.sessionRequired);
    return { token: cookie, via: 'cookie' };
  }
  const token = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
  if (!token.startsWith('psess_')) throw new HttpError(401, ERR.sessionRequired);
  return { token, via: 'header' };
}

/** The partner session of the request (401 otherwise); a cookie write without its CSRF token is 403. */
export async function authenticatePartner(sql: Sql, req: FastifyRequest): Promise<PartnerPrincipal> {
  const { token, via } = partnerCredentialOf(req);
  if (!token.startsWith('psess_')) throw new HttpError(401, ERR.session);
  const row = await sessionByHash(sql, hashSecret(token));
  if (!row) throw new HttpError(401, ERR.session);
  if (via === 'cookie' && !SAFE_METHODS.has(req.method) && !csrfMatches(token, req.headers[CSRF_HEADER])) {
    throw new HttpError(403, CSRF_ERROR);
  }
  return {
    accountId: Number(row.account_id),
    sessionId: Number(row.id),
    token,
    via,
    verified: row.email_verified_at !== null,
  };
}

/**
 * The partner scope's check after authentication: an account whose email is not verified (made by a
 * password typed into an application form) reaches only the routes marked `unverifiedPartner`; every other
 * partner route is 403 until a link mailed to the address is followed (partner-claims/service.ts).
 */
export function requireVerifiedPartner(req: FastifyRequest): void {
  if (!partnerOf(req).verified && !req.routeOptions.config.unverifiedPartner) {
    throw new HttpError(403, CLAIMS_ERR.unverified);
  }
}

/** The caller the partner scope's onRequest hook resolved. */
export function partnerOf(req: { partner?: PartnerPrincipal }): PartnerPrincipal {
  if (!req.partner) throw new HttpError(401, ERR.sessionRequired);
  return req.partner;
}

// ---- IP hashes and rate limits ----

let hasher: Promise<IpHasher> | null = null;
/** The installation's IP hasher, read once per process on first use. */
export function ipHashOf(sql: Sql, ip: string | undefined): Promise<string | null> {
  hasher ??= loadIpHasher(sql).catch((err: unknown) => {
    hasher = null;
    throw err;
  });
  return hasher.then((h) => h(ip));
}

const emailKey = (email: string) =>
  createHash('sha256').update(normalEmail(email)).digest('base64url').slice(0, 32);

/** The limits of ApiDeps with their defaults (docs/partners.md "Rate limits"). */
export function limitsOf(deps: ApiDeps) {
  return {
    authPerMinute: deps.partnerLimits?.authPerMinute ?? 10,
    authIpPerMinute: deps.partnerLimits?.authIpPerMinute ?? 30,
    applyPerMinute: deps.partnerLimits?.applyPerMinute ?? 10,
    exempt: new Set(deps.partnerLimits?.exempt ?? []),
  };
}

/**
 * Takes a token from each bucket of `action` (the caller's IP unless exempt, then the email when given);
 * an empty bucket is 429 with Retry-After. Keys hold an IP hash and an email hash, never either value.
 */
export async function rateLimit(
  sql: Sql,
  deps: ApiDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  action: 'sign-in' | 'magic-link' | 'apply',
  email?: string,
): Promise<void> {
  const l = limitsOf(deps);
  const ipRule = action === 'apply' ? l.applyPerMinute : l.authIpPerMinute;
  const buckets: { key: string; perMinute: number }[] = [];
  if (!l.exempt.has(req.ip)) {
    buckets.push({ key: `${action}:ip:${(await ipHashOf(sql, req.ip)) ?? 'none'}`, perMinute: ipRule });
  }
  if (email !== undefined && action !== 'apply') {
    buckets.push({ key: `${action}:email:${emailKey(email)}`, perMinute: l.authPerMinute });
  }
  for (const b of buckets) {
    const wait = await takeToken(sql, b.key, { perMinute: b.perMinute, burst: b.perMinute });
    if (wait !== null) {
      reply.header('retry-after', String(wait));
      throw new HttpError(429, ERR.tooMany);
    }
  }
}

/**
 * onRequest of the routes that sign partners in: they need no session, but an Authorization header that is
 * not a partner session (aff_, affk_, sess_) is refused as on every other partner route (cookies are not:
 * a browser sends the dashboard's cookie along by itself).
 */
export async function refuseOtherBearers(req: FastifyRequest): Promise<void> {
  const header = req.headers.authorization;
  if (header !== undefined) partnerCredentialOf(req);
}
