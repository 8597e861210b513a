// svc.<resource>.<verb>(): the management API (session `sess_…` or key `affk_…`) and the dashboard reads
// (session), one method per route. Every method resolves with the answer's JSON body as the API reference
// shows it (`{ data: … }`, plus `meta` or `metrics` where the route has them) and rejects with SvcError
// on any other status. GET, PUT and DELETE are retried like tracking calls; a POST is retried only on 429,
// since sending it twice could act twice (two partners, two payouts).
import type { CallOptions, SendOptions, Transport } from './transport.ts';
import type { ApiBody, ApiQuery, ApiSuccess } from './types.ts';

export type Id = number | string;

/** A path with its ids URL-encoded: path`/a/${1}/b` */
export function path(strings: TemplateStringsArray, ...ids: Id[]): string {
  return strings.reduce(
    (out, s, i) => out + s + (i < ids.length ? encodeURIComponent(String(ids[i])) : ''),
    '',
  );
}

export abstract class Resource {
  readonly #http: Transport;

  constructor(http: Transport) {
    this.#http = http;
  }

  protected getJson<T>(p: string, query: SendOptions['query'], o: CallOptions | undefined): Promise<T> {
    return this.#http.call('GET', p, { ...o, query, auth: true, retry: 'idempotent' });
  }
  protected postJson<T>(p: string, body: unknown, o: CallOptions | undefined): Promise<T> {
    return this.#http.call('POST', p, { ...o, body, auth: true, retry: 'once' });
  }
  protected putJson<T>(p: string, body: unknown, o: CallOptions | undefined): Promise<T> {
    return this.#http.call('PUT', p, { ...o, body, auth: true, retry: 'idempotent' });
  }
  protected deleteJson<T>(p: string, o: CallOptions | undefined): Promise<T> {
    return this.#http.call('DELETE', p, { ...o, auth: true, retry: 'idempotent' });
  }
}

const PROGRAMS = '/api/advertiser/affiliate-programs';
type Programs_ = typeof PROGRAMS;
type Program_ = '/api/advertiser/affiliate-programs/{id}';

export class Programs extends Resource {
  list(o?: CallOptions): Promise<ApiSuccess<Programs_, 'get'>> {
    return this.getJson(PROGRAMS, undefined, o);
  }
  /** The answer holds the full tracking token (`data.api_token`), shown this once. */
  create(body: ApiBody<Programs_, 'post'>, o?: CallOptions): Promise<ApiSuccess<Programs_, 'post'>> {
    return this.postJson(PROGRAMS, body, o);
  }
  get(id: Id, o?: CallOptions): Promise<ApiSuccess<Program_, 'get'>> {
    return this.getJson(path`/api/advertiser/affiliate-programs/${id}`, undefined, o);
  }
  update(id: Id, body: ApiBody<Program_, 'put'>, o?: CallOptions): Promise<ApiSuccess<Program_, 'put'>> {
    return this.putJson(path`/api/advertiser/affiliate-programs/${id}`, body, o);
  }
  /** Soft delete: the program's tracking token is refused from then on. */
  delete(id: Id, o?: CallOptions): Promise<ApiSuccess<Program_, 'delete'>> {
    return this.deleteJson(path`/api/advertiser/affiliate-programs/${id}`, o);
  }
  goLive(id: Id, o?: CallOptions): Promise<ApiSuccess<`${Program_}/go-live`, 'post'>> {
    return this.postJson(path`/api/advertiser/affiliate-programs/${id}/go-live`, undefined, o);
  }
  /** A new tracking token (shown once); the old one is refused at once. */
  regenerateToken(id: Id, o?: CallOptions): Promise<ApiSuccess<`${Program_}/regenerate-api-token`, 'post'>> {
    return this.postJson(path`/api/advertiser/affiliate-programs/${id}/regenerate-api-token`, undefined, o);
  }
}

type Partners_ = `${Program_}/partners`;
type Partner_ = `${Partners_}/{partnerId}`;

export class Partners extends Resource {
  list(programId: Id, o?: CallOptions): Promise<ApiSuccess<Partners_, 'get'>> {
    return this.getJson(path`/api/advertiser/affiliate-programs/${programId}/partners`, undefined, o);
  }
  create(
    programId: Id,
    body: ApiBody<Partners_, 'post'>,
    o?: CallOptions,
  ): Promise<ApiSuccess<Partners_, 'post'>> {
    return this.postJson(path`/api/advertiser/affiliate-programs/${programId}/partners`, body, o);
  }
  /** A new invite link for the partner (the older one stops working). */
  invite(programId: Id, partnerId: Id, o?: CallOptions): Promise<ApiSuccess<`${Partner_}/invite`, 'post'>> {
    return this.postJson(
      path`/api/advertiser/affiliate-programs/${programId}/partners/${partnerId}/invite`,
      undefined,
      o,
    );
  }
  approve(programId: Id, partnerId: Id, o?: CallOptions): Promise<ApiSuccess<`${Partner_}/approve`, 'post'>> {
    return this.postJson(
      path`/api/advertiser/affiliate-programs/${programId}/partners/${partnerId}/approve`,
      undefined,
      o,
    );
  }
  reject(
    programId: Id,
    partnerId: Id,
    body: ApiBody<`${Partner_}/reject`, 'post', { reason?: string }> = {},
    o?: CallOptions,
  ): Promise<ApiSuccess<`${Partner_}/reject`, 'post'>> {
    return this.postJson(
      path`/api/advertiser/affiliate-programs/${programId}/partners/${partnerId}/reject`,
      body,
      o,
    );
  }
}

type Links_ = `${Partner_}/links`;
type Link_ = `${Links_}/{linkId}`;

export class Links extends Resource {
  list(programId: Id, partnerId: Id, o?: CallOptions): Promise<ApiSuccess<Links_, 'get'>> {
    return this.getJson(
      path`/api/advertiser/affiliate-programs/${programId}/partners/${partnerId}/links`,
      undefined,
      o,
    );
  }
  /** `short_link` is generated when omitted. */
  create(
    programId: Id,
    partnerId: Id,
    body: ApiBody<Links_, 'post'> = {},
    o?: CallOptions,
  ): Promise<ApiSuccess<Links_, 'post'>> {
    return this.postJson(
      path`/api/advertiser/affiliate-programs/${programId}/partners/${partnerId}/links`,
      body,
      o,
    );
  }
  update(
    programId: Id,
    partnerId: Id,
    linkId: Id,
    body: ApiBody<Link_, 'put'>,
    o?: CallOptions,
  ): Promise<ApiSuccess<Link_, 'put'>> {
    return this.putJson(
      path`/api/advertiser/affiliate-programs/${programId}/partners/${partnerId}/links/${linkId}`,
      body,
      o,
    );
  }
}

type Commissions_ = `${Program_}/commissions`;
type Commission_ = '/api/advertiser/commissions/{id}';

export class Commissions extends Resource {
  list(
    programId: Id,
    query?: ApiQuery<Commissions_, 'get'>,
    o?: CallOptions,
  ): Promise<ApiSuccess<Commissions_, 'get'>> {
    return this.getJson(
      path`/api/advertiser/affiliate-programs/${programId}/commissions`,
      query ?? undefined,
      o,
    );
  }
  markPaid(id: Id, o?: CallOptions): Promise<ApiSuccess<`${Commission_}/mark-paid`, 'post'>> {
    return this.postJson(path`/api/advertiser/commissions/${id}/mark-paid`, undefined, o);
  }
  /** Clears a review hold. */
  approve(id: Id, o?: CallOptions): Promise<ApiSuccess<`${Commission_}/approve`, 'post'>> {
    return this.postJson(path`/api/advertiser/commissions/${id}/approve`, undefined, o);
  }
  /** Reverses a held commission (a ledger deduction). */
  reject(
    id: Id,
    body: ApiBody<`${Commission_}/reject`, 'post', { reason?: string }> = {},
    o?: CallOptions,
  ): Promise<ApiSuccess<`${Commission_}/reject`, 'post'>> {
    return this.postJson(path`/api/advertiser/commissions/${id}/reject`, body, o);
  }
}

type ProgramPayouts_ = `${Program_}/payouts`;
type Payout_ = '/api/advertiser/payouts/{id}';

export class Payouts extends Resource {
  /** One payout per approved partner with approved commissions in no payout (at least min_payout_cents). */
  create(programId: Id, o?: CallOptions): Promise<ApiSuccess<ProgramPayouts_, 'post'>> {
    return this.postJson(path`/api/advertiser/affiliate-programs/${programId}/payouts`, undefined, o);
  }
  list(
    programId: Id,
    query?: ApiQuery<ProgramPayouts_, 'get'>,
    o?: CallOptions,
  ): Promise<ApiSuccess<ProgramPayouts_, 'get'>> {
    return this.getJson(path`/api/advertiser/affiliate-programs/${programId}/payouts`, query ?? undefined, o);
  }
  get(id: Id, o?: CallOptions): Promise<ApiSuccess<Payout_, 'get'>> {
    return this.getJson(path`/api/advertiser/payouts/${id}`, undefined, o);
  }
  /** Its commissions become `paid`; a second call is 409 `Payout already paid`. */
  markPaid(
    id: Id,
    body: ApiBody<`${Payout_}/mark-paid`, 'post'> = {},
    o?: CallOptions,
  ): Promise<ApiSuccess<`${Payout_}/mark-paid`, 'post'>> {
    return this.postJson(path`/api/advertiser/payouts/${id}/mark-paid`, body, o);
  }
  /** Its commissions become payable again. */
  cancel(id: Id, o?: CallOptions): Promise<ApiSuccess<`${Payout_}/cancel`, 'post'>> {
    return this.postJson(path`/api/advertiser/payouts/${id}/cancel`, undefined, o);
  }
  /** The payouts as CSV text for PayPal Payouts, Wise batch payments, or plain. */
  export(
    programId: Id,
    query: ApiQuery<`${ProgramPayouts_}/export`, 'get'>,
    o?: CallOptions,
  ): Promise<string> {
    return this.getJson(
      path`/api/advertiser/affiliate-programs/${programId}/payouts/export`,
      query ?? undefined,
      o,
    );
  }
}

const WEBHOOKS = '/api/advertiser/webhooks';
type Webhooks_ = typeof WEBHOOKS;
type Webhook_ = '/api/advertiser/webhooks/{id}';

export class Webhooks extends Resource {
  /** The answer holds the endpoint's `whsec_…` secret, shown this once: keep it for verifyWebhook. */
  create(body: ApiBody<Webhooks_, 'post'>, o?: CallOptions): Promise<ApiSuccess<Webhooks_, 'post'>> {
    return this.postJson(WEBHOOKS, body, o);
  }
  list(o?: CallOptions): Promise<ApiSuccess<Webhooks_, 'get'>> {
    return this.getJson(WEBHOOKS, undefined, o);
  }
  get(id: Id, o?: CallOptions): Promise<ApiSuccess<Webhook_, 'get'>> {
    return this.getJson(path`/api/advertiser/webhooks/${id}`, undefined, o);
  }
  update(id: Id, body: ApiBody<Webhook_, 'put'>, o?: CallOptions): Promise<ApiSuccess<Webhook_, 'put'>> {
    return this.putJson(path`/api/advertiser/webhooks/${id}`, body, o);
  }
  delete(id: Id, o?: CallOptions): Promise<ApiSuccess<Webhook_, 'delete'>> {
    return this.deleteJson(path`/api/advertiser/webhooks/${id}`, o);
  }
  /** A new secret; for 24 hours deliveries are signed with both. */
  rotateSecret(id: Id, o?: CallOptions): Promise<ApiSuccess<`${Webhook_}/rotate-secret`, 'post'>> {
    return this.postJson(path`/api/advertiser/webhooks/${id}/rotate-secret`, undefined, o);
  }
  /** Sends a `webhook.test` event to the endpoint. */
  test(id: Id, o?: CallOptions): Promise<ApiSuccess<`${Webhook_}/test`, 'post'>> {
    return this.postJson(path`/api/advertiser/webhooks/${id}/test`, undefined, o);
  }
  /** Re-enables a disabled endpoint. */
  enable(id: Id, o?: CallOptions): Promise<ApiSuccess<`${Webhook_}/enable`, 'post'>> {
    return this.postJson(path`/api/advertiser/webhooks/${id}/enable`, undefined, o);
  }
  deliveries(
    id: Id,
    query?: ApiQuery<`${Webhook_}/deliveries`, 'get'>,
    o?: CallOptions,
  ): Promise<ApiSuccess<`${Webhook_}/deliveries`, 'get'>> {
    return this.getJson(path`/api/advertiser/webhooks/${id}/deliveries`, query ?? undefined, o);
  }
  /** Sends a failed (or pending) delivery again now. */
  retryDelivery(
    deliveryId: Id,
    o?: CallOptions,
  ): Promise<ApiSuccess<'/api/advertiser/webhook-deliveries/{id}/retry', 'post'>> {
    return this.postJson(path`/api/advertiser/webhook-deliveries/${deliveryId}/retry`, undefined, o);
  }
}

type Status_ = '/api/tracking/status/{programId}';
type Events_ = '/api/tracking/events/{programId}';
type Performance_ = '/api/tracking/performance/{programId}';
type Breakdown_ = '/api/tracking/breakdown/{programId}';

/** The dashboard reads: a session (`sess_…`) is required, an API key gets 401. */
export class Dashboard extends Resource {
  /** Integration steps (page view, referrals, payments) and their test events. */
  status(programId: Id, o?: CallOptions): Promise<ApiSuccess<Status_, 'get'>> {
    return this.getJson(path`/api/tracking/status/${programId}`, undefined, o);
  }
  /** Clicks, leads and conversions, newest first, paginated (`meta.pagination`). */
  events(
    programId: Id,
    query?: ApiQuery<Events_, 'get'>,
    o?: CallOptions,
  ): Promise<ApiSuccess<Events_, 'get'>> {
    return this.getJson(path`/api/tracking/events/${programId}`, query ?? undefined, o);
  }
  /** One row per day, the totals and their trends against the previous period. */
  performance(
    programId: Id,
    query?: ApiQuery<Performance_, 'get'>,
    o?: CallOptions,
  ): Promise<ApiSuccess<Performance_, 'get'>> {
    return this.getJson(path`/api/tracking/performance/${programId}`, query ?? undefined, o);
  }
  /** Clicks, leads, conversions, revenue and commission by partner, link, country, device, … */
  breakdown(
    programId: Id,
    query: ApiQuery<Breakdown_, 'get'>,
    o?: CallOptions,
  ): Promise<ApiSuccess<Breakdown_, 'get'>> {
    return this.getJson(path`/api/tracking/breakdown/${programId}`, query ?? undefined, o);
  }
}
