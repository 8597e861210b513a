// Waiting for a dependency (Postgres, Kafka) instead of exiting: a process started while one is down, or a
// step that meets an outage, retries with p-retry, at most 0.5 s apart (work resumes within about 1 s of the
// dependency's return), and logs one line per attempt at most every LOG_EVERY_MS, without a stack trace.
import pRetry, { AbortError } from 'p-retry';
import type { Logger } from '../logger.ts';
import { isConnectionError } from '../db/sql.ts';

/** The longest pause between two attempts: bounds the time from a dependency's return to resumed work. */
export const MAX_BACKOFF_MS = 500;
const LOG_EVERY_MS = 5_000;

/**
 * The message of an error, with its code when it has one (ECONNREFUSED, CONNECTION_CLOSED, 57P01...). An
 * error that aggregates others (the Kafka client's "fetch failed 9 times") also names the last of them,
 * which says why.
 */
export function describeError(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown; errors?: unknown } | null;
  const message = typeof e?.message === 'string' && e.message !== '' ? e.message : String(err);
  const text = typeof e?.code === 'string' && !message.includes(e.code) ? `${e.code}: ${message}` : message;
  const last: unknown = Array.isArray(e?.errors) ? e.errors.at(-1) : undefined;
  return last === undefined || last === err ? text : `${text} (last: ${describeError(last)})`;
}

export interface WaitOptions {
  /** Stops waiting (rejects with the last error) once this returns true, e.g. on shutdown. */
  stopped?: () => boolean;
  /** Only errors for which this is true are waited out; others reject at once. Default: all. */
  retryable?: (err: unknown) => boolean;
}

/**
 * Runs `attempt` until it succeeds, logging `waiting for <what>` (warn) at most every few seconds while it
 * fails, and `<what> reachable` once it succeeds after having failed.
 */
export async function waitForDependency<T>(
  log: Logger,
  what: string,
  attempt: () => Promise<T>,
  opts: WaitOptions = {},
): Promise<T> {
  let lastLog = 0;
  let failures = 0;
  const result = await pRetry(
    async () => {
      if (opts.stopped?.()) throw new AbortError(`stopped while waiting for ${what}`);
      return attempt();
    },
    {
      forever: true,
      minTimeout: 100,
      factor: 2,
      maxTimeout: MAX_BACKOFF_MS,
      randomize: false,
      shouldRetry: (err) => (opts.retryable ? opts.retryable(err) : true),
      onFailedAttempt: (err) => {
        failures++;
        const now = Date.now();
        if (now - lastLog >= LOG_EVERY_MS) {
          lastLog = now;
          log.warn({ attempt: err.attemptNumber, reason: describeError(err) }, `waiting for ${what}`);
        }
      },
    },
  );
  if (failures > 0) log.info({ attempts: failures + 1 }, `${what} reachable`);
  return result;
}

/**
 * Whether an error is an outage that waiting fixes: Postgres unreachable, or a produce refused or timed
 * out (ProduceUnavailableError, by name to avoid an import cycle with kafka.ts). Anything else is retried a
 * few times only, since it may be a bug that retrying cannot fix.
 */
export function isOutage(err: unknown): boolean {
  return isConnectionError(err) || (err as { name?: unknown } | null)?.name === 'ProduceUnavailableError';
}

/**
 * A warning for repeated failures during an outage: an outage is logged with its reason (no stack) at most
 * once every 5 s, with the count of lines left out since; any other error is logged in full every time.
 */
export function outageWarning(everyMs = LOG_EVERY_MS) {
  let last = 0;
  let suppressed = 0;
  return (log: Pick<Logger, 'warn'>, err: unknown, msg: string): void => {
    if (!isOutage(err)) {
      log.warn({ err }, msg);
      return;
    }
    const now = Date.now();
    if (now - last < everyMs) {
      suppressed++;
      return;
    }
    log.warn({ reason: describeError(err), suppressed }, msg);
    last = now;
    suppressed = 0;
  };
}
