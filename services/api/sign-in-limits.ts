// The limits of every route that checks a password or makes an account (docs/security.md "Sign-in limits
// and password hashing"), checked before any password is hashed, so guessing costs the service a database
// round trip, not a hash:
//   - password checks (dashboard login and cookie login; partner login, cookie login, accepting an invite
//     with an existing account's password, PUT /api/partner/me's current_password): per client address a
//     token bucket of attempts (AUTH_RATE_LIMIT_IP_PER_MINUTE), shared by all of them; per email at most
//     AUTH_FAILURES_PER_EMAIL failures within AUTH_FAILURE_WINDOW, dashboard users and partner accounts
//     counted apart. A check counts as a failure from the moment it starts and a success clears the email's
//     failures, so concurrent guesses cannot overrun the limit;
//   - dashboard signups: per address a bucket of SIGNUP_RATE_LIMIT_PER_HOUR, per email the failure window
//     (a signup that makes the account clears it; a 409 counts);
//   - magic-link requests: per address and per email, token buckets (AUTH_RATE_LIMIT_IP_PER_MINUTE and
//     AUTH_RATE_LIMIT_PER_MINUTE).
// Past a limit: 429 `Too many attempts` with Retry-After (the seconds until the next attempt is allowed).
// Addresses are req.ip (X-Forwarded-For only from TRUST_PROXY's proxies); AUTH_RATE_LIMIT_EXEMPT skips the
// per-address limits. Keys hold HMACs of the address and the email (the installation's ip_hash key), never
// either value.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Sql } from '../../shared/db/sql.ts';
import { HttpError } from '../../shared/http/server.ts';
import { clearFailures, takeFailure, takeToken } from '../../shared/db/rate-limits.ts';
import type { BucketRule } from '../../shared/db/rate-limits.ts';
import { loadIpHasher } from '../../shared/db/instance-keys.ts';
import type { IpHasher } from '../../shared/domain/ip-hash.ts';
import type { ApiDeps, SignInLimits } from './deps.ts';

/** The 429 of every limited sign-in route (CONTRACT part three): integrators match this string. */
export const TOO_MANY_ATTEMPTS = 'Too many attempts';

/** The defaults of shared/config-sign-in.ts, for an ApiDeps without signInLimits. */
export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = {
  ipPerMinute: 30,
  failuresPerEmail: 10,
  failureWindowMs: 15 * 60_000,
  magicLinkPerMinute: 10,
  signupPerHour: 20,
  exempt: [],
};

let hasher: Promise<IpHasher> | null = null;
/** The installation's HMAC (instance key ip_hash), read once per process on first use. */
function hasherOf(sql: Sql): Promise<IpHasher> {
  hasher ??= loadIpHasher(sql).catch((err: unknown) => {
    hasher = null;
    throw err;
  });
  return hasher;
}

/** The hash of a client address (partner sign-ins record it); null without one. */
export async function ipHashOf(sql: Sql, ip: string | undefined): Promise<string | null> {
  return (await hasherOf(sql))(ip);
}

/** `::ffff:1.2.3.4` is 1.2.3.4. */
const plainIp = (ip: string) => (ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip);

/** Whether `ip` is one of `exempt` (IPv4-mapped IPv6 addresses match their IPv4 form). */
export function isExempt(exempt: readonly string[], ip: string | undefined): boolean {
  if (!ip) return false;
  const a = plainIp(ip).toLowerCase();
  return exempt.some((e) => plainIp(e).toLowerCase() === a);
}

/** What a limited route does when its check passes. */
export interface Attempt {
  /** The password was right (or the account was made): the email's failures are forgotten. */
  succeeded(): Promise<void>;
}

type Realm = 'dashboard' | 'partner';

function refuse(reply: FastifyReply, wait: number): never {
  reply.header('retry-after', String(wait));
  throw new HttpError(429, TOO_MANY_ATTEMPTS);
}

async function keysOf(sql: Sql, req: FastifyRequest, email: string) {
  const h = await hasherOf(sql);
  // An email hashes lowercased and trimmed: `A@x.co ` and `a@x.co` are one email, as at sign-in.
  return { ip: h(req.ip) ?? 'none', email: h(`email:${email.trim().toLowerCase()}`)! };
}

async function bucket(sql: Sql, reply: FastifyReply, key: string, rule: BucketRule): Promise<void> {
  const wait = await takeToken(sql, key, rule);
  if (wait !== null) refuse(reply, wait);
}

async function failureWindow(sql: Sql, reply: FastifyReply, key: string, l: SignInLimits): Promise<Attempt> {
  const wait = await takeFailure(sql, key, { max: l.failuresPerEmail, windowMs: l.failureWindowMs });
  if (wait !== null) refuse(reply, wait);
  return { succeeded: () => clearFailures(sql, key) };
}

const limitsOf = (deps: ApiDeps) => deps.signInLimits ?? DEFAULT_SIGN_IN_LIMITS;

/**
 * Before a password check of `email`: the address's bucket, then the email's failure window (429 past
 * either). The check counts as a failure until the caller says `succeeded()`.
 */
export async function beginPasswordCheck(
  deps: ApiDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  realm: Realm,
  email: string,
): Promise<Attempt> {
  const l = limitsOf(deps);
  const k = await keysOf(deps.sql, req, email);
  if (!isExempt(l.exempt, req.ip)) {
    await bucket(deps.sql, reply, `sign-in:ip:${k.ip}`, { perMinute: l.ipPerMinute, burst: l.ipPerMinute });
  }
  return failureWindow(deps.sql, reply, `sign-in:${realm}:${k.email}`, l);
}

/** Before a dashboard signup: the address's bucket, then the email's window (a made account clears it). */
export async function beginSignup(
  deps: ApiDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  email: string,
): Promise<Attempt> {
  const l = limitsOf(deps);
  const k = await keysOf(deps.sql, req, email);
  if (!isExempt(l.exempt, req.ip)) {
    const rule = { perMinute: l.signupPerHour / 60, burst: l.signupPerHour };
    await bucket(deps.sql, reply, `signup:ip:${k.ip}`, rule);
  }
  return failureWindow(deps.sql, reply, `signup:email:${k.email}`, l);
}

/** Before a magic-link request: the address's bucket, then the email's. */
export async function limitMagicLink(
  deps: ApiDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  email: string,
): Promise<void> {
  const l = limitsOf(deps);
  const k = await keysOf(deps.sql, req, email);
  if (!isExempt(l.exempt, req.ip)) {
    const rule = { perMinute: l.ipPerMinute, burst: l.ipPerMinute };
    await bucket(deps.sql, reply, `magic-link:ip:${k.ip}`, rule);
  }
  const rule = { perMinute: l.magicLinkPerMinute, burst: l.magicLinkPerMinute };
  await bucket(deps.sql, reply, `magic-link:email:${k.email}`, rule);
}
