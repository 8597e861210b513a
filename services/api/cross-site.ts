// No cross-site writes (docs/security.md "Cross-site requests and tokens in links"): a request that may change
// something and that a browser sends with the service's session cookie, or that signs in through a cookie
// route, is refused (403 CROSS_SITE) when it comes from a page of another origin. The cookies' SameSite and
// the X-CSRF-Token check already stop most of it; this also stops a sibling subdomain (same site: the
// cookies go along) and the sign-in routes, which need no session (login CSRF). One onRequest hook on the
// whole API (app.ts), before authentication: it reads headers only.
import type { FastifyRequest } from 'fastify';
import { ERROR_SCHEMA, HttpError } from '../../shared/http/server.ts';
import { SAFE_METHODS, SESSION_COOKIE, readCookie } from './modules/auth/cookie.ts';
import { PARTNER_COOKIE } from './modules/partner-auth/service.ts';

export const CROSS_SITE = 'Cross-site request refused';

/**
 * The routes that set or clear a session cookie (the dashboard's and the portal's sign-in, sign-up, magic
 * link, invite and sign-out): checked whatever credential the request carries.
 */
const SESSION_ROUTE = /^\/api\/(partner\/)?auth\/session(\/|\?|$)/;

type Req = Pick<FastifyRequest, 'method' | 'url' | 'headers' | 'protocol' | 'host'>;

/** Whether the request is a write a browser would make with the session: the rule applies to it. */
export function browserSessionWrite(req: Pick<Req, 'method' | 'url' | 'headers'>): boolean {
  if (SAFE_METHODS.has(req.method)) return false;
  if (SESSION_ROUTE.test(req.url)) return true;
  // An Authorization header is the credential whenever there is one (access.ts): the cookie is then unused.
  if (req.headers.authorization !== undefined) return false;
  const cookie = req.headers.cookie;
  return readCookie(cookie, SESSION_COOKIE) !== undefined || readCookie(cookie, PARTNER_COOKIE) !== undefined;
}

/** `scheme://host[:port]` of a URL or an Origin header, lower case, default port dropped; null if none. */
export function originOf(value: string): string | null {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : null;
  } catch {
    return null;
  }
}

/**
 * Whether the request comes from a page of another origin than the service's: `Sec-Fetch-Site: cross-site`,
 * or an `Origin` that is not `serviceOrigin` (`Origin: null` included). `serviceOrigin` null (PUBLIC_URL not
 * set): the origin the request itself was sent to (its scheme and Host, as TRUST_PROXY lets Fastify read
 * them), which only a page of that same origin can name. No Origin and no Sec-Fetch-Site: not a browser's
 * cross-site request (browsers send Origin with every POST, PUT, PATCH and DELETE).
 */
export function fromAnotherOrigin(
  req: Pick<Req, 'headers' | 'protocol' | 'host'>,
  serviceOrigin: string | null,
): boolean {
  if (req.headers['sec-fetch-site'] === 'cross-site') return true;
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  const own = serviceOrigin ?? originOf(`${req.protocol}://${req.host}`);
  const given = originOf(origin);
  return given === null || own === null || given !== own;
}

/** The onRequest hook: 403 CROSS_SITE for a browser session write from another origin. */
export function refuseCrossSiteWrites(serviceOrigin: string | null) {
  return async (req: FastifyRequest): Promise<void> => {
    if (browserSessionWrite(req) && fromAnotherOrigin(req, serviceOrigin)) {
      throw new HttpError(403, CROSS_SITE);
    }
  };
}

/**
 * An onRoute hook of the API (app.ts): every write route can answer the 403 above (a request with a session
 * cookie from another origin), so its document says so where the route does not describe its 403 itself.
 */
export function documentCrossSite(route: {
  method: string | string[];
  schema?: { hide?: boolean; response?: unknown };
}): void {
  const schema = route.schema;
  if (schema === undefined || schema.hide === true) return;
  if ([route.method].flat().every((m) => SAFE_METHODS.has(m))) return;
  const response = { ...(schema.response as Record<string, unknown> | undefined) };
  response[403] ??= {
    ...ERROR_SCHEMA,
    description: `\`${CROSS_SITE}\` (a session write from another origin), or the credential may not do this`,
  };
  schema.response = response;
}
