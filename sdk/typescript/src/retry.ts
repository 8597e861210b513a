// When a call is sent again and how long it waits first. Pure functions, so the decisions are tested
// without a network (test/unit/sdk-retry.test.ts).

/** Statuses that mean "not done now, try again later": rate limited, or the service (or a proxy) unavailable. */
export const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/**
 * How a call may be repeated:
 * - `idempotent`: sending it twice has the effect of sending it once (lead, sale and refund with their
 *   Idempotency-Key, a click with its event_id, GET, PUT, DELETE): retried on RETRY_STATUSES, network
 *   errors and timeouts.
 * - `once`: a POST that would act twice (creating a partner, a payout): retried only on 429, which says
 *   the request was refused before it was processed.
 */
export type RetryMode = 'idempotent' | 'once';

/** First backoff step; each retry doubles it up to BACKOFF_CAP_MS. */
export const BACKOFF_BASE_MS = 500;
export const BACKOFF_CAP_MS = 8_000;
/** A Retry-After longer than this is not waited for: the call fails with the answer instead. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** What an attempt ended with: an HTTP status, or no answer at all (network error, timeout). */
export type AttemptResult = { status: number } | { network: true };

export function isRetryable(mode: RetryMode, result: AttemptResult): boolean {
  if ('network' in result) return mode === 'idempotent';
  if (mode === 'once') return result.status === 429;
  return RETRY_STATUSES.has(result.status);
}

/**
 * A Retry-After header in milliseconds: delay-seconds (`2`, also `1.5`) or an HTTP date (RFC 9110 10.2.3).
 * Null when absent or unreadable; a date in the past is 0.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | null {
  if (value === null || value === undefined) return null;
  const text = value.trim();
  if (text === '') return null;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // A date has letters (a weekday or a month); a bare negative or odd number is no date.
  if (!/[a-z]/i.test(text)) return null;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}

/**
 * Milliseconds to wait before retry number `retry` (0 for the first retry), or null not to retry.
 * With Retry-After: what the service asked for plus up to 10 % (at most 1 s) of jitter, so that clients
 * refused together do not come back together; null when it asked for longer than MAX_RETRY_AFTER_MS.
 * Without: exponential backoff with "equal jitter", between half and all of BASE × 2^retry (capped).
 */
export function retryDelay(
  retry: number,
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number | null {
  if (retryAfterMs !== null) {
    if (retryAfterMs > MAX_RETRY_AFTER_MS) return null;
    return retryAfterMs + Math.round(random() * Math.min(1000, retryAfterMs * 0.1));
  }
  const step = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry);
  return Math.round(step / 2 + (random() * step) / 2);
}
