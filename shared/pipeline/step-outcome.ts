// What a pipeline step says about one message: ok(value), retry(reason) or deadLetter(reason), as
// PostHog's ingestion steps do. Only a step decides that a message is poison; a thrown error is an
// infrastructure failure, and the consumer retries the chunk (Kafka redelivers it past the retries).
import { isDataError } from '../db/sql.ts';

export type StepOutcome<T> =
  | { type: 'ok'; value: T }
  | { type: 'retry'; reason: string; error?: unknown }
  | { type: 'dead-letter'; reason: string; error?: unknown };

export const ok = <T>(value: T): StepOutcome<T> => ({ type: 'ok', value });
export const retry = (reason: string, error?: unknown): StepOutcome<never> => ({
  type: 'retry',
  reason,
  error,
});
export const deadLetter = (reason: string, error?: unknown): StepOutcome<never> => ({
  type: 'dead-letter',
  reason,
  error,
});

/** A step's decision about an error its writes raised for one message (never `ok`). */
export type ErrorDecision = (err: unknown) => StepOutcome<never>;

/**
 * The decision of a step that knows no better: a value Postgres rejects (SQLSTATE class 22 or 23) is the
 * message's fault and dead-lettered; anything else (connections, deadlocks, a bug in our SQL) is retried.
 * A step that can tell a race from bad data (a unique violation a concurrent writer caused) handles that
 * error itself, before it gets here.
 */
export const valuesRejectedArePoison: ErrorDecision = (err) => {
  const reason = err instanceof Error ? err.message : String(err);
  return isDataError(err) ? deadLetter(reason, err) : retry(reason, err);
};
