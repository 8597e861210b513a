// When a failed delivery is attempted again (CONTRACT "Webhooks to integrators", Delivery; NOTES "Svix's
// retries"): after each delay of the schedule in turn, each with ±10 % jitter so that a receiver that came
// back is not hit by every waiting delivery in the same second; past the last one the delivery has failed.
// A 429 or a 5xx carrying `Retry-After` is believed within bounds: the receiver knows when it will be back.

/** The jitter applied to every delay: ±10 %. */
export const JITTER = 0.1;
/** A Retry-After is honoured between these bounds (a receiver asking for 0 s or for a day is not). */
export const RETRY_AFTER_MIN_MS = 1_000;
export const RETRY_AFTER_MAX_MS = 3_600_000;

/**
 * The delay before the next attempt after `attempts` attempts (the one just made included), or null when
 * the schedule is exhausted. `random` is Math.random's kind of number, for tests.
 */
export function nextDelayMs(
  schedule: readonly number[],
  attempts: number,
  retryAfterMs: number | null = null,
  random: number = Math.random(),
): number | null {
  const base = schedule[attempts - 1];
  if (base === undefined) return null;
  if (retryAfterMs !== null) return Math.min(RETRY_AFTER_MAX_MS, Math.max(RETRY_AFTER_MIN_MS, retryAfterMs));
  return Math.round(base * (1 + JITTER * (2 * random - 1)));
}

/**
 * A Retry-After header (seconds, or an HTTP date) as milliseconds from `now`, on the statuses where
 * Standard Webhooks says to honour it (429, 502, 503, 504); null otherwise or when it does not parse.
 */
export function retryAfterMs(status: number, header: string | undefined, now = Date.now()): number | null {
  if (![429, 502, 503, 504].includes(status) || header === undefined) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
