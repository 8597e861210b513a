// One HTTP call with its retries: a per-attempt timeout (AbortSignal), the retry decisions of retry.ts,
// the same body and Idempotency-Key on every attempt, and the answer parsed. Only global fetch.
import { SvcError } from './errors.ts';
import { isRetryable, parseRetryAfter, retryDelay } from './retry.ts';
import type { RetryMode } from './retry.ts';
import type { QueryValue } from './types.ts';

export interface CallOptions {
  /** Aborts the call (and its retries); the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Per attempt; default the client's `timeoutMs`. */
  timeoutMs?: number;
  /** Default the client's `maxRetries`. */
  maxRetries?: number;
}

export interface SendOptions extends CallOptions {
  body?: unknown;
  /** Query parameters: undefined and null are left out, an array repeats its name. */
  query?: object | undefined;
  /** Send the client's token (every route but the click). */
  auth?: boolean;
  idempotencyKey?: string;
  retry: RetryMode;
  /** What SvcError.idempotencyKey reports (the click's event_id travels in the body). */
  retryKey?: string;
}

export interface Answer {
  status: number;
  headers: Headers;
  /** JSON parsed, the text when not JSON, undefined when empty. */
  body: unknown;
}

export interface TransportOptions {
  baseUrl: string;
  token?: string | undefined;
  maxRetries: number;
  timeoutMs: number;
  fetch: typeof fetch;
}

class Timeout extends Error {}

export class Transport {
  readonly options: TransportOptions;
  private readonly base: string;

  constructor(options: TransportOptions) {
    this.options = options;
    this.base = options.baseUrl.replace(/\/+$/, '');
  }

  url(path: string, query?: object): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {}) as [string, QueryValue][]) {
      if (value === undefined || value === null) continue;
      for (const v of Array.isArray(value) ? value : [value]) params.append(name, String(v));
    }
    const qs = params.toString();
    return `${this.base}${path.startsWith('/') ? path : `/${path}`}${qs ? `?${qs}` : ''}`;
  }

  /** The final answer, whatever its status (after retries); rejects only when no answer came. */
  async send(method: string, path: string, o: SendOptions): Promise<Answer> {
    const url = this.url(path, o.query);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (o.auth && this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    if (o.idempotencyKey !== undefined) headers['idempotency-key'] = o.idempotencyKey;
    let payload: string | undefined;
    if (o.body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(o.body);
    }
    const timeoutMs = o.timeoutMs ?? this.options.timeoutMs;
    const maxRetries = o.maxRetries ?? this.options.maxRetries;
    for (let attempt = 0; ; attempt++) {
      let answer: Answer | null = null;
      let failure: unknown = null;
      try {
        answer = await this.attempt(url, { method, headers, body: payload }, timeoutMs, o.signal);
      } catch (err) {
        if (o.signal?.aborted) throw o.signal.reason;
        failure = err;
      }
      const retryAfterMs = answer ? parseRetryAfter(answer.headers.get('retry-after')) : null;
      const delay =
        attempt < maxRetries && isRetryable(o.retry, answer ? { status: answer.status } : { network: true })
          ? retryDelay(attempt, retryAfterMs)
          : null;
      if (delay === null) {
        if (answer) return answer;
        throw new SvcError({
          status: 0,
          error: describe(failure, timeoutMs, attempt + 1),
          idempotencyKey: o.retryKey ?? o.idempotencyKey,
          cause: failure,
        });
      }
      await sleep(delay, o.signal);
    }
  }

  /** send() for a route whose every non-2xx answer is an error. */
  async call<T>(method: string, path: string, o: SendOptions): Promise<T> {
    const answer = await this.send(method, path, o);
    if (answer.status >= 200 && answer.status < 300) return answer.body as T;
    throw errorOf(answer, o.retryKey ?? o.idempotencyKey);
  }

  private async attempt(
    url: string,
    init: { method: string; headers: Record<string, string>; body: string | undefined },
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<Answer> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Timeout()), timeoutMs);
    const onAbort = () => controller.abort(signal!.reason);
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort);
    try {
      const res = await this.options.fetch(url, { ...init, signal: controller.signal });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: parseBody(text, res.headers) };
    } catch (err) {
      throw controller.signal.reason instanceof Timeout ? controller.signal.reason : err;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}

/** The SvcError for an error answer: the body's `error` string when it has one. */
export function errorOf(answer: Answer, idempotencyKey: string | undefined): SvcError {
  const body = answer.body;
  const text =
    body !== null && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string'
      ? (body as { error: string }).error
      : typeof body === 'string' && body !== ''
        ? body.slice(0, 200)
        : `HTTP ${answer.status}`;
  return new SvcError({
    status: answer.status,
    error: text,
    body,
    idempotencyKey,
    retryAfterMs: parseRetryAfter(answer.headers.get('retry-after')),
  });
}

function parseBody(text: string, headers: Headers): unknown {
  if (text === '') return undefined;
  if (!/\bjson\b/i.test(headers.get('content-type') ?? '')) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function describe(failure: unknown, timeoutMs: number, attempts: number): string {
  const tries = attempts === 1 ? '' : ` (${attempts} attempts)`;
  if (failure instanceof Timeout) return `No answer within ${timeoutMs} ms${tries}`;
  const err = failure as { message?: string; cause?: { message?: string; code?: string } } | null;
  const cause = err?.cause?.code ?? err?.cause?.message;
  return `Network error: ${err?.message ?? String(failure)}${cause ? ` (${cause})` : ''}${tries}`;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
