// Who is calling a partner route (/api/partner/*), and the rate limit of applications (the sign-in routes'
// limits are services/api/sign-in-limits.ts).
// Only a `psess_` partner session reaches these routes: from `Authorization: Bearer psess_…`, or without an
// Authorization header from the `svc_partner_session` cookie (which then needs the X-CSRF-Token of the
// dashboard's rule on every request but GET/HEAD/OPTIONS). Any other credential (aff_, affk_, sess_, the
// dashboard's svc_session cookie) is 401, and a psess_ token is 401 everywhere else (the dashboard's
// authenticate accepts only sess_ and affk_).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Sql } from '../../../../shared/db/sql.ts';
import { HttpError } from '../../../../shared/http/server.ts';
import { hashSecret } from '../../../../shared/domain/secrets.ts';
import { takeToken } from '../../../../shared/db/rate-limits.ts';
import { TOO_MANY_ATTEMPTS, ipHashOf, isExempt } from '../../sign-in-limits.ts';
import { CSRF_ERROR, CSRF_HEADER, SAFE_METHODS, csrfMatches, readCookie } from '../auth/cookie.ts';
import { sessionByHash } from './dal.ts';
import { ERR, PARTNER_COOKIE } from './service.ts';
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

// ---- applications' rate limit ----

/**
 * Applications from a program's public page: a token bucket per client address (APPLY_RATE_LIMIT_PER_MINUTE,
 * also the burst; RATE_LIMIT_EXEMPT skips it); past it 429 `Too many attempts` with Retry-After. The key
 * holds the address's hash, never the address.
 */
export async function limitApplications(
  sql: Sql,
  deps: ApiDeps,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const perMinute = deps.partnerLimits?.applyPerMinute ?? 10;
  if (isExempt(deps.partnerLimits?.exempt ?? [], req.ip)) return;
  const key = `apply:ip:${(await ipHashOf(sql, req.ip)) ?? 'none'}`;
  const wait = await takeToken(sql, key, { perMinute, burst: perMinute });
  if (wait !== null) {
    reply.header('retry-after', String(wait));
    throw new HttpError(429, TOO_MANY_ATTEMPTS);
  }
}
