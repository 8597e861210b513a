// svc.track: the four tracking calls, each safe to retry. Lead, sale and refund carry an Idempotency-Key
// (the service answers a retry with the recorded result), a click carries an event_id (stored once per
// program); both are minted once per call, so every attempt of that call sends the same one.
import { randomId } from './platform.ts';
import { errorOf } from './transport.ts';
import type { CallOptions, Transport } from './transport.ts';
import type {
  ClickInput,
  ClickResult,
  DiscountResult,
  LeadInput,
  LeadResult,
  RefundInput,
  RefundResult,
  SaleDuplicateBody,
  SaleInput,
  SaleResult,
} from './types.ts';

export interface TrackOptions extends CallOptions {
  /**
   * Sent as the Idempotency-Key header; default a new UUID for this call. Give your own (an order id, a
   * stored UUID) to make retries across processes or restarts safe too.
   */
  idempotencyKey?: string;
}

/** The start of the sale 409 that means "already recorded" (not a reused Idempotency-Key). */
const DUPLICATE_SALE = 'Duplicate transaction_id';

export class Tracking {
  readonly #http: Transport;

  constructor(http: Transport) {
    this.#http = http;
  }

  /**
   * POST /api/v1/track/click: records a click on a referral link (no token needed). `input.event_id`
   * defaults to a new UUID; a retry with it is stored once and answered with the same click_id.
   */
  async click(input: ClickInput, options: CallOptions = {}): Promise<ClickResult> {
    const eventId = input.event_id ?? (await randomId());
    return this.#http.call('POST', '/api/v1/track/click', {
      ...options,
      body: { ...input, event_id: eventId },
      retry: 'idempotent',
      retryKey: eventId,
    });
  }

  /** POST /api/v1/track/lead: a signup, by click_id and/or customer_key (server mode with the token). */
  async lead(input: LeadInput, options: TrackOptions = {}): Promise<LeadResult> {
    return this.#http.call('POST', '/api/v1/track/lead', await this.#command(input, options));
  }

  /**
   * POST /api/v1/track/sale. A transaction_id that is already recorded resolves with
   * `{ duplicate: true, error, message, statusCode }` (the sale exists: do not send it again).
   */
  async sale(input: SaleInput, options: TrackOptions = {}): Promise<SaleResult> {
    const o = await this.#command(input, options);
    const answer = await this.#http.send('POST', '/api/v1/track/sale', o);
    if (answer.status >= 200 && answer.status < 300) return answer.body as SaleResult;
    const body = answer.body as SaleDuplicateBody | undefined;
    if (answer.status === 409 && typeof body?.error === 'string' && body.error.startsWith(DUPLICATE_SALE)) {
      return { duplicate: true, ...body };
    }
    throw errorOf(answer, o.idempotencyKey);
  }

  /** POST /api/v1/track/refund: reverses (full) or reduces (partial) the sale's commission. */
  async refund(input: RefundInput, options: TrackOptions = {}): Promise<RefundResult> {
    return this.#http.call('POST', '/api/v1/track/refund', await this.#command(input, options));
  }

  /**
   * GET /api/v1/track/discount: the discount a known customer is owed (its partner's group's processor
   * coupon, with the ids to apply at checkout), or `{ data: null }` (docs/rewards.md).
   */
  discount(customerKey: string, options: CallOptions = {}): Promise<DiscountResult> {
    return this.#http.call('GET', '/api/v1/track/discount', {
      ...options,
      query: { customer_key: customerKey },
      auth: true,
      retry: 'idempotent',
    });
  }

  async #command(body: unknown, options: TrackOptions) {
    const { idempotencyKey, ...call } = options;
    return {
      ...call,
      body,
      auth: true,
      idempotencyKey: idempotencyKey ?? (await randomId()),
      retry: 'idempotent' as const,
    };
  }
}
