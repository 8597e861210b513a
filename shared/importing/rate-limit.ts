// Keeping under a source's rate limit (docs/importing.md "Rate limits"): with the times of the last
// requests, how long to wait before the next one so that no window of `windowMs` holds more than
// `requests` of them (pure), and the shared record of those times per source account (import_rate_limits),
// so that every import of one account, on any process, and the campaign picker count against one limit,
// as the source counts them.
import { createHash } from 'node:crypto';
import type { Sql } from '../db/sql.ts';
export interface RateLimit {
  requests: number;
  windowMs: number;
}

/**
 * The margin added to a window: a request is counted here when it leaves and at the source when it arrives,
 * and two requests do not take the same time on the way. 2 % of the window, at least a quarter second.
 */
export const marginMs = (limit: RateLimit) => Math.max(250, Math.ceil(limit.windowMs * 0.02));

/** Milliseconds to wait before the next request at `now`; 0 when it may go now. */
export function waitBeforeNext(recent: readonly number[], now: number, limit: RateLimit): number {
  const window = limit.windowMs + marginMs(limit);
  const inWindow = recent.filter((t) => t > now - window).sort((a, b) => a - b);
  if (inWindow.length < limit.requests) return 0;
  // The request that must leave the window first: the (n - requests + 1)-th from the end.
  const oldest = inWindow[inWindow.length - limit.requests]!;
  return Math.max(0, oldest + window - now);
}

/** The times worth keeping after a request at `now`: those still in the window, at most `requests`. */
export function remember(recent: readonly number[], now: number, limit: RateLimit): number[] {
  return [...recent.filter((t) => t > now - limit.windowMs - marginMs(limit)), now]
    .sort((a, b) => a - b)
    .slice(-limit.requests);
}

/** `45/30s`, `1000/1s` (IMPORT_RATE_LIMIT) as a limit; null when it does not parse. */
export function parseRateLimit(text: string, parseDuration: (t: string) => number | null): RateLimit | null {
  const m = /^\s*(\d+)\s*\/\s*(\S+)\s*$/.exec(text);
  if (!m) return null;
  const requests = Number(m[1]);
  const windowMs = parseDuration(m[2]!);
  if (!Number.isSafeInteger(requests) || requests < 1 || windowMs === null || windowMs < 1) return null;
  return { requests, windowMs };
}

/**
 * How long a 429 asks to wait, in ms, from its headers: `Retry-After` (seconds or an HTTP date),
 * `RateLimit-Reset` (seconds from now, IETF draft) or `X-RateLimit-Reset` (seconds, or a Unix time in
 * seconds or milliseconds, as several APIs send it); null when none says. Never below 0.
 */
export function retryWaitMs(
  headers: Record<string, string | string[] | undefined>,
  now: number,
): number | null {
  const one = (name: string) => {
    const v = headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const retryAfter = one('retry-after');
  if (retryAfter !== undefined && retryAfter.trim() !== '') {
    if (/^\s*\d+(\.\d+)?\s*$/.test(retryAfter)) return Math.max(0, Math.ceil(Number(retryAfter) * 1000));
    const at = Date.parse(retryAfter);
    if (!Number.isNaN(at)) return Math.max(0, at - now);
  }
  for (const name of ['ratelimit-reset', 'x-ratelimit-reset']) {
    const v = one(name);
    if (v === undefined || !/^\s*\d+(\.\d+)?\s*$/.test(v)) continue;
    const n = Number(v);
    if (n > 1e12) return Math.max(0, n - now); // a Unix time in ms
    if (n > 1e9) return Math.max(0, n * 1000 - now); // a Unix time in seconds
    return Math.ceil(n * 1000);
  }
  return null;
}

/** The account a limit is counted for: the source, where it is called, and its credentials (hashed). */
export function limitKey(source: string, baseUrl: string, credentials: Record<string, string>): string {
  return createHash('sha256')
    .update(JSON.stringify([source, baseUrl, Object.values(credentials)]))
    .digest('base64url');
}

/**
 * Waits until the account's limit allows one more request, and records it: a short transaction on the
 * account's row (locked, so two processes never both take the last slot), the wait outside it.
 */
export async function acquire(
  sql: Sql,
  key: string,
  limit: RateLimit,
  wait: (ms: number) => Promise<void>,
): Promise<void> {
  for (;;) {
    const waitMs = await sql.begin(async (tx) => {
      await tx`insert into import_rate_limits (key) values (${key}) on conflict do nothing`;
      const [row] = await tx<{ requests: Date[] }[]>`
        select requests from import_rate_limits where key = ${key} for update`;
      const now = Date.now();
      const recent = row!.requests.map((d) => d.getTime());
      const ms = waitBeforeNext(recent, now, limit);
      if (ms > 0) return ms;
      const kept = remember(recent, now, limit).map((t) => new Date(t).toISOString());
      await tx`update import_rate_limits set requests = ${kept}::timestamptz[], updated_at = now() where key = ${key}`;
      return 0;
    });
    if (waitMs === 0) return;
    await wait(waitMs);
  }
}
