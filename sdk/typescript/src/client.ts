// new Svc({ baseUrl, token }): the tracking calls, the management resources, the dashboard reads and a
// plain request() for any other route, over one Transport (global fetch, retries, timeouts).
import { Transport } from './transport.ts';
import type { CallOptions } from './transport.ts';
import type { RetryMode } from './retry.ts';
import { Tracking } from './tracking.ts';
import { Commissions, Dashboard, Links, Partners, Payouts, Programs, Webhooks } from './resources.ts';
import { Rewards } from './rewards.ts';
import type { QueryValue } from './types.ts';

export interface SvcOptions {
  /** Where svc answers, e.g. `https://svc.example.com` (the tracking and API routes share it). */
  baseUrl: string;
  /**
   * The bearer credential: the program's tracking token `aff_…` for lead, sale and refund, a management
   * key `affk_…` or a dashboard session `sess_…` for the other calls. A click needs none.
   */
  token?: string;
  /** Retries after the first attempt (429, 502, 503, 504, network errors, timeouts). Default 3. */
  maxRetries?: number;
  /** Per attempt, in milliseconds. Default 10000. */
  timeoutMs?: number;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
}

export interface RequestOptions extends CallOptions {
  /** Sent as JSON. */
  body?: unknown;
  query?: Record<string, QueryValue>;
  /** An Idempotency-Key header (the tracking routes honour it); the call is then retried as idempotent. */
  idempotencyKey?: string;
  /**
   * `idempotent`: retried on 429, 502, 503, 504, network errors and timeouts; `once`: only on 429.
   * Default `idempotent` for GET, HEAD, PUT and DELETE and for a call with an idempotencyKey, else `once`.
   */
  retry?: RetryMode;
  /** Send no Authorization header. */
  anonymous?: boolean;
}

export class Svc {
  readonly track: Tracking;
  readonly programs: Programs;
  readonly partners: Partners;
  readonly links: Links;
  readonly commissions: Commissions;
  readonly payouts: Payouts;
  readonly webhooks: Webhooks;
  readonly dashboard: Dashboard;
  readonly rewards: Rewards;
  readonly #http: Transport;

  constructor(options: SvcOptions) {
    if (!options || typeof options.baseUrl !== 'string' || !/^https?:\/\//i.test(options.baseUrl)) {
      throw new TypeError('new Svc({ baseUrl }): baseUrl must be an http(s) URL');
    }
    const fetchFn = options.fetch ?? globalThis.fetch;
    if (typeof fetchFn !== 'function') {
      throw new TypeError('new Svc(): no global fetch in this runtime; pass options.fetch');
    }
    this.#http = new Transport({
      baseUrl: options.baseUrl,
      token: options.token,
      maxRetries: options.maxRetries ?? 3,
      timeoutMs: options.timeoutMs ?? 10_000,
      // Called unbound: some runtimes' fetch refuses any `this` but the global one.
      fetch: (input, init) => fetchFn(input, init),
    });
    this.track = new Tracking(this.#http);
    this.programs = new Programs(this.#http);
    this.partners = new Partners(this.#http);
    this.links = new Links(this.#http);
    this.commissions = new Commissions(this.#http);
    this.payouts = new Payouts(this.#http);
    this.webhooks = new Webhooks(this.#http);
    this.dashboard = new Dashboard(this.#http);
    this.rewards = new Rewards(this.#http);
  }

  /**
   * Any route: `svc.request('GET', '/api/advertiser/api-keys')`. Resolves with the parsed JSON (the text
   * for a non-JSON answer, undefined for an empty one) of a 2xx answer; rejects with SvcError otherwise.
   */
  request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const { retry, anonymous, ...rest } = options;
    const upper = method.toUpperCase();
    const safe = ['GET', 'HEAD', 'PUT', 'DELETE'].includes(upper) || options.idempotencyKey !== undefined;
    return this.#http.call<T>(upper, path, {
      ...rest,
      auth: !anonymous,
      retry: retry ?? (safe ? 'idempotent' : 'once'),
    });
  }
}
