// The one error type a call rejects with, for an error answer and for no answer at all.

export class SvcError extends Error {
  /** The HTTP status, or 0 when no answer came (network error, timeout) after every retry. */
  readonly status: number;
  /** The service's `error` string, or what went wrong on the way. */
  readonly error: string;
  /** The parsed answer body (JSON, or the text when it was not JSON); null without an answer. */
  readonly body: unknown;
  /**
   * The Idempotency-Key the call carried (lead, sale, refund), or the click's event_id: a later retry
   * with the same key is answered with the recorded result instead of recording the event again.
   */
  readonly idempotencyKey: string | undefined;
  /** The answer's Retry-After in milliseconds, when it had one. */
  readonly retryAfterMs: number | null;

  constructor(init: {
    status: number;
    error: string;
    body?: unknown;
    idempotencyKey?: string | undefined;
    retryAfterMs?: number | null;
    cause?: unknown;
  }) {
    super(init.status === 0 ? init.error : `${init.status}: ${init.error}`, { cause: init.cause });
    this.name = 'SvcError';
    this.status = init.status;
    this.error = init.error;
    this.body = init.body ?? null;
    this.idempotencyKey = init.idempotencyKey;
    this.retryAfterMs = init.retryAfterMs ?? null;
  }
}

/** verifyWebhook's refusal: a missing header, a bad or stale signature, or a body that is not JSON. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}
