// The sign-in limits of shared/config.ts, validated with the rest of the configuration at boot. The web
// process passes them to the API (services/api/sign-in-limits.ts); docs/security.md "Sign-in limits and
// password hashing" says what each one limits and why the defaults are what they are.
import { isIP } from 'node:net';
import { parseDuration } from './config-mail.ts';

type Env = Record<string, string | undefined>;

export interface SignInConfig {
  /**
   * AUTH_FAILURES_PER_EMAIL (10): failed password checks per email within AUTH_FAILURE_WINDOW (15m), counted
   * apart for dashboard users and partner accounts; a successful sign-in clears them. 0 = off.
   */
  authFailuresPerEmail: number;
  authFailureWindowMs: number;
  /**
   * AUTH_RATE_LIMIT_IP_PER_MINUTE (30): password checks per client address and minute, right or wrong
   * (a token bucket, also the burst); magic-link requests have a bucket of their own of the same size. 0 = off.
   */
  authRateLimitIpPerMinute: number;
  /** AUTH_RATE_LIMIT_PER_MINUTE (10): magic-link requests per email and minute (also the burst). 0 = off. */
  authRateLimitPerMinute: number;
  /** SIGNUP_RATE_LIMIT_PER_HOUR (20): dashboard signups per client address and hour (also the burst). 0 = off. */
  signupRateLimitPerHour: number;
  /**
   * AUTH_RATE_LIMIT_EXEMPT (none): client addresses that skip the per-address limits of these routes (the
   * per-email ones always apply). For a proxy that cannot pass the client's address on; the tests exempt
   * loopback.
   */
  authRateLimitExempt: string[];
}

export function loadSignInConfig(env: Env, problems: string[]): SignInConfig {
  const int = (name: string, dflt: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return dflt;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0 || n > 1_000_000) {
      problems.push(`${name} must be an integer between 0 and 1000000 (got "${raw}")`);
      return dflt;
    }
    return n;
  };
  const windowRaw = env.AUTH_FAILURE_WINDOW || '15m';
  let windowMs = parseDuration(windowRaw);
  if (windowMs === null || windowMs < 1_000 || windowMs > 7 * 86_400_000) {
    problems.push(
      `AUTH_FAILURE_WINDOW must be a duration from 1s to 7d, such as 15m or 1h (got "${windowRaw}")`,
    );
    windowMs = 15 * 60_000;
  }
  const exempt = (env.AUTH_RATE_LIMIT_EXEMPT ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const a of exempt) {
    if (isIP(a) === 0) problems.push(`AUTH_RATE_LIMIT_EXEMPT entries must be IP addresses (got "${a}")`);
  }
  return {
    authFailuresPerEmail: int('AUTH_FAILURES_PER_EMAIL', 10),
    authFailureWindowMs: windowMs,
    authRateLimitIpPerMinute: int('AUTH_RATE_LIMIT_IP_PER_MINUTE', 30),
    authRateLimitPerMinute: int('AUTH_RATE_LIMIT_PER_MINUTE', 10),
    signupRateLimitPerHour: int('SIGNUP_RATE_LIMIT_PER_HOUR', 20),
    authRateLimitExempt: exempt,
  };
}
