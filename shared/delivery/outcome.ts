// The rules of one delivery attempt, pure (test/unit/delivery-queue.test.ts): what a transport may answer,
// what the queue does with the answer (delivered, retried after the schedule's next wait with jitter, the
// dead end, or released at shutdown), and the backoff itself. Every queue (mail over SMTP, webhooks over
// HTTP) follows these; only the schedule and the jitter are its own (docs/architecture.md "Delivery").

/** One claimed job: a row of the queue's table, leased to this worker until it records its result. */
export interface Job<P> {
  /** The row's id. */
  id: string;
  /** The claim's own token: only the claim that holds it may record a result (a lease that ran out is lost). */
  token: string;
  /** This attempt's number, 1 for the first. */
  attempt: number;
  /** One attempt asked for by hand after the job had ended: no retry after it, whatever the schedule says. */
  once: boolean;
  /** Jobs of one key (a webhook endpoint) share `keyConcurrency` slots; null: no such limit. */
  key: string | null;
  /** When the change it delivers happened (svc_delivery_seconds). */
  createdAt: Date;
  payload: P;
  /** Fields for the log line of the dead end (never a recipient or a body). */
  logFields?: Record<string, unknown>;
}

/** What a transport answers about one attempt; it never throws for the receiver's failures. */
export type Attempted<D> =
  | { type: 'accepted'; detail: D }
  | {
      type: 'failed';
      /** What went wrong, for the row and the log: the receiver's answer when there was one. */
      error: string;
      /** The receiver answered (an SMTP reply, an HTTP status): false for a timeout, a refused connection. */
      answered: boolean;
      /** The receiver asked for this wait (HTTP Retry-After), bounded by RETRY_AFTER_*. */
      retryAfterMs?: number | null;
      /** The receiver said never again (HTTP 410 Gone): the dead end now. */
      gone?: boolean;
      detail: D;
    };

/** What an attempt does to its job: the queue's outcome union. */
export type Outcome =
  | { type: 'delivered' }
  | { type: 'retry'; delayMs: number; error: string }
  /** The dead end: no attempt is left (or the receiver is gone). */
  | { type: 'failed'; error: string; gone: boolean }
  /** Cut off by shutdown without an answer: due again at once, the attempt not counted. */
  | { type: 'released' };

export interface RetryPolicy {
  /** The wait after the 1st, 2nd, … failed attempt; one more failure is the dead end. */
  scheduleMs: readonly number[];
  /** Each wait is drawn in ±jitter of itself (0.2 for ±20 %). */
  jitter: number;
}

/** A Retry-After is honoured between these bounds (a receiver asking for 0 s or for a day is not). */
export const RETRY_AFTER_MIN_MS = 1_000;
export const RETRY_AFTER_MAX_MS = 3_600_000;

/** The error of an attempt that is not made: a worker died during the last one and its lease ran out. */
export const NO_ATTEMPTS_LEFT = 'the worker sending it stopped, and no attempts are left';

/**
 * The wait after failed attempt number `attempt` (1-based), with jitter so that jobs that failed together
 * do not all come back together; a receiver's Retry-After instead, within bounds. null: that was the last.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  attempt: number,
  retryAfterMs: number | null = null,
  random: number = Math.random(),
): number | null {
  const base = policy.scheduleMs[attempt - 1];
  if (base === undefined) return null;
  if (retryAfterMs !== null) return Math.min(RETRY_AFTER_MAX_MS, Math.max(RETRY_AFTER_MIN_MS, retryAfterMs));
  return Math.round(base * (1 + policy.jitter * (2 * random - 1)));
}

/** Whether the job may be attempted: an attempt past the last one (its lease ran out mid-send) is not made. */
export function attemptsLeft(policy: RetryPolicy, job: Pick<Job<unknown>, 'attempt' | 'once'>): boolean {
  return job.once || job.attempt <= policy.scheduleMs.length + 1;
}

/** What the answer to an attempt does to its job. `aborted`: the worker was shutting down meanwhile. */
export function decide(
  policy: RetryPolicy,
  job: Pick<Job<unknown>, 'attempt' | 'once'>,
  answer: Attempted<unknown>,
  aborted: boolean,
  random: number = Math.random(),
): Outcome {
  if (answer.type === 'accepted') return { type: 'delivered' };
  if (aborted && !answer.answered) return { type: 'released' };
  const { error } = answer;
  if (answer.gone) return { type: 'failed', error, gone: true };
  const delay = job.once ? null : retryDelayMs(policy, job.attempt, answer.retryAfterMs ?? null, random);
  return delay === null ? { type: 'failed', error, gone: false } : { type: 'retry', delayMs: delay, error };
}
