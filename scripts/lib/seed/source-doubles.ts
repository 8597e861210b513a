// Doubles of the sources an import reads (docs/importing.md), small HTTP servers on loopback built from the
// sources' public API documentation, for the tests and bench:import (scripts never import test helpers):
// - Rewardful (developers.rewardful.com, REST API v1): HTTP Basic with the API Secret as the user name
//   (401 `{ "error": "Invalid API Secret." }` otherwise); GET /v1/campaigns, /v1/affiliates,
//   /v1/affiliate_coupons, /v1/referrals (`conversion_state[]`), /v1/commissions (`expand[]=sale`), paged
//   with `page` and `limit` (default 25, at most 100) in the `{ pagination, data }` envelope; 45 requests
//   per 30 s, a 429 beyond it with the draft RateLimit headers (`RateLimit-Reset`: seconds).
// - Dub (dub.co/docs/api-reference): a Bearer key; GET /groups, /partners, /discount-codes, /customers,
//   /commissions (`status` filter), JSON arrays paged with `startingAfter` (the last id seen) and
//   `pageSize` (at most 100); a 429 with `Retry-After` beyond its limit.
// Every request is logged (path, query, status, time); `fail` answers the next requests 429 (or another
// status); `hold` keeps a request waiting until released (a crash reached by construction).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Obj = Record<string, unknown>;

export interface DoubleRequest {
  at: number;
  path: string;
  query: URLSearchParams;
  status: number;
  /** Answered by `fail` (not by the double's own rate limit). */
  injected: boolean;
}

export interface DoubleOptions {
  /** The source's limit, enforced (default: its documented one); null: none. */
  limit?: { requests: number; windowMs: number } | null;
}

export interface SourceDouble {
  url: string;
  requests: DoubleRequest[];
  /** The next `n` requests are answered `status` (default 429) with these headers. */
  fail(n: number, headers?: Record<string, string>, status?: number): void;
  /** Requests matching `match` wait until `release()` is called (returns how many are waiting). */
  hold(match: (path: string, query: URLSearchParams) => boolean): { waiting(): number; release(): void };
  close(): Promise<void>;
}

type Route = (path: string, q: URLSearchParams) => { status: number; body: unknown } | null;

function serve(
  authorized: (header: string | undefined) => boolean,
  unauthorized: unknown,
  route: Route,
  limit: { requests: number; windowMs: number } | null,
  limited: (waitMs: number) => Record<string, string>,
): Promise<SourceDouble> {
  const requests: DoubleRequest[] = [];
  const failures: { headers: Record<string, string>; status: number }[] = [];
  const holds: { match: (p: string, q: URLSearchParams) => boolean; gate: Promise<void>; waiting: number }[] =
    [];
  const recent: number[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://double');
    const entry: DoubleRequest = {
      at: Date.now(),
      path: url.pathname,
      query: url.searchParams,
      status: 0,
      injected: false,
    };
    requests.push(entry);
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      entry.status = status;
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    void (async () => {
      for (const h of holds) {
        if (h.match(url.pathname, url.searchParams)) {
          h.waiting++;
          await h.gate;
          h.waiting--;
        }
      }
      if (!authorized(req.headers.authorization)) return answer(401, unauthorized);
      const failure = failures.shift();
      if (failure) {
        entry.injected = true;
        return answer(failure.status, { error: 'Too many requests' }, failure.headers);
      }
      if (limit) {
        const now = Date.now();
        while (recent.length > 0 && recent[0]! <= now - limit.windowMs) recent.shift();
        if (recent.length >= limit.requests)
          return answer(429, { error: 'Rate limit exceeded' }, limited(recent[0]! + limit.windowMs - now));
        recent.push(now);
      }
      const r = route(url.pathname, url.searchParams);
      if (!r) return answer(404, { error: `Not found: ${url.pathname}` });
      answer(r.status, r.body);
    })();
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      resolve({
        url: `http://127.0.0.1:${port}`,
        requests,
        fail(n, headers = { 'retry-after': '1' }, status = 429) {
          for (let i = 0; i < n; i++) failures.push({ headers, status });
        },
        hold(match) {
          let release!: () => void;
          const h = { match, gate: new Promise<void>((r) => (release = r)), waiting: 0 };
          holds.push(h);
          return {
            waiting: () => h.waiting,
            release: () => {
              holds.splice(holds.indexOf(h), 1);
              release();
            },
          };
        },
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    });
  });
}

// ---- Rewardful ----

export interface RewardfulData {
  campaigns: Obj[];
  affiliates: Obj[];
  coupons: Obj[];
  referrals: Obj[];
  commissions: Obj[];
}

export function startRewardful(
  data: RewardfulData,
  secret: string,
  opts: DoubleOptions = {},
): Promise<SourceDouble> {
  const expected = `Basic ${Buffer.from(`${secret}:`).toString('base64')}`;
  const lists: Record<string, (q: URLSearchParams) => Obj[]> = {
    '/v1/campaigns': () => data.campaigns,
    '/v1/affiliates': () => data.affiliates,
    '/v1/affiliate_coupons': () => data.coupons,
    '/v1/referrals': (q) => {
      const states = q.getAll('conversion_state[]');
      return states.length === 0
        ? data.referrals
        : data.referrals.filter((r) => states.includes(String(r.conversion_state)));
    },
    '/v1/commissions': (q) => {
      const expand = q.getAll('expand[]');
      return data.commissions.map((c) => ({
        ...c,
        sale: expand.includes('sale') ? c.sale : { id: (c.sale as Obj | undefined)?.id },
        campaign: expand.includes('campaign') ? c.campaign : undefined,
      }));
    },
  };
  return serve(
    (h) => h === expected,
    { error: 'Invalid API Secret.' },
    (path, q) => {
      const list = lists[path];
      if (!list) return null;
      const all = list(q);
      const limit = Math.min(100, Math.max(1, Number(q.get('limit') ?? 25) || 25));
      const page = Math.max(1, Number(q.get('page') ?? 1) || 1);
      const pages = Math.max(1, Math.ceil(all.length / limit));
      return {
        status: 200,
        body: {
          pagination: {
            previous_page: page > 1 ? page - 1 : null,
            current_page: page,
            next_page: page < pages ? page + 1 : null,
            count: all.slice((page - 1) * limit, page * limit).length,
            limit,
            total_pages: pages,
            total_count: all.length,
          },
          data: all.slice((page - 1) * limit, page * limit),
        },
      };
    },
    opts.limit === undefined ? { requests: 45, windowMs: 30_000 } : opts.limit,
    (waitMs) => ({
      'ratelimit-limit': '45',
      'ratelimit-remaining': '0',
      'ratelimit-reset': String(Math.max(1, Math.ceil(waitMs / 1000))),
    }),
  );
}

const uuid = (kind: number, i: number) =>
  `${kind.toString(16).padStart(8, '0')}-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
const iso = (ms: number) => new Date(ms).toISOString();

export interface RewardfulFixtureOptions {
  affiliates: number;
  /** Commissions in all (spread over the active affiliates' customers). */
  commissions: number;
  currency?: string;
  /** Times are spread over the days before this one. */
  now?: number;
  /** A tag making emails and tokens unique between runs sharing a database. */
  tag: string;
}

/**
 * A Rewardful account as its API documents it: two campaigns (percent with a coupon, amount one-time with
 * none), affiliates each with a link (token) and a customer per affiliate, coupons, referrals and
 * commissions in every state. Every 10th affiliate has the placeholder last name "Unknown".
 */
export function rewardfulFixture(o: RewardfulFixtureOptions): RewardfulData {
  const now = o.now ?? Date.now();
  const currency = o.currency ?? 'USD';
  const campaigns = [
    {
      id: uuid(1, 1),
      name: `Friends ${o.tag}`,
      created_at: iso(now - 400 * 86_400_000),
      reward_type: 'percent',
      commission_percent: 30,
      commission_amount_cents: null,
      max_commission_period_months: 12,
      max_commissions: null,
      days_until_commissions_are_due: 30,
      stripe_coupon_id: `coupon_${o.tag}`,
      default: true,
    },
    {
      id: uuid(1, 2),
      name: `Agencies ${o.tag}`,
      created_at: iso(now - 400 * 86_400_000),
      reward_type: 'amount',
      commission_percent: null,
      commission_amount_cents: 2500,
      max_commission_period_months: null,
      max_commissions: 1,
      days_until_commissions_are_due: 0,
      stripe_coupon_id: null,
      default: false,
    },
  ];
  const affiliates: Obj[] = [];
  const coupons: Obj[] = [];
  const referrals: Obj[] = [];
  for (let i = 0; i < o.affiliates; i++) {
    const campaign = campaigns[i % 2]!;
    const id = uuid(2, i);
    affiliates.push({
      id,
      created_at: iso(now - 300 * 86_400_000),
      updated_at: iso(now - 300 * 86_400_000),
      first_name: `Aff${i}`,
      last_name: i % 10 === 0 ? 'Unknown' : `Last${i}`,
      email: `aff${i}-${o.tag}@example.com`,
      paypal_email: null,
      state: 'active',
      stripe_customer_id: null,
      stripe_account_id: null,
      visitors: 10,
      leads: 1,
      conversions: 1,
      campaign: { id: campaign.id, name: campaign.name, created_at: campaign.created_at },
      links: [
        {
          id: uuid(3, i),
          url: `https://shop.example/?via=v${i}${o.tag}`,
          token: `v${i}${o.tag}`,
          visitors: 10,
          leads: 1,
          conversions: 1,
        },
      ],
    });
    coupons.push({
      id: uuid(4, i),
      external_id: `promo_${o.tag}_${i}`,
      token: `C${i}${o.tag}`.slice(0, 32),
      leads: 0,
      conversions: 0,
      affiliate_id: id,
      archived: false,
      archived_at: null,
    });
    referrals.push({
      id: uuid(5, i),
      link: { id: uuid(3, i), token: `v${i}${o.tag}` },
      customer: {
        platform: 'stripe',
        id: `cus_${o.tag}${i}`,
        name: `Customer ${i}`,
        email: `cust${i}-${o.tag}@example.com`,
      },
      affiliate: { id, email: `aff${i}-${o.tag}@example.com` },
      created_at: iso(now - 200 * 86_400_000),
      became_lead_at: iso(now - 200 * 86_400_000),
      became_conversion_at: iso(now - 199 * 86_400_000),
      expires_at: null,
      updated_at: iso(now - 199 * 86_400_000),
      deactivated_at: null,
      conversion_state: 'conversion',
      stripe_account_id: 'acct_double',
      stripe_customer_id: `cus_${o.tag}${i}`,
    });
  }
  const states = ['pending', 'due', 'paid', 'voided'];
  const commissions: Obj[] = [];
  for (let j = 0; j < o.commissions; j++) {
    const i = j % Math.max(1, o.affiliates);
    const a = affiliates[i]!;
    const campaign = campaigns[i % 2]!;
    const state = states[j % 4]!;
    const saleAt = now - (1 + (j % 180)) * 86_400_000 - j * 1000;
    const saleCents = 10_000 + (j % 7) * 100;
    const amount = campaign.reward_type === 'percent' ? Math.round(saleCents * 0.3) : 2500;
    commissions.push({
      id: uuid(6, j),
      created_at: iso(saleAt + 60_000),
      updated_at: iso(saleAt + 60_000),
      amount,
      currency,
      state,
      due_at: iso(saleAt + 30 * 86_400_000),
      paid_at: state === 'paid' ? iso(saleAt + 31 * 86_400_000) : null,
      voided_at: state === 'voided' ? iso(saleAt + 2 * 86_400_000) : null,
      campaign: { id: campaign.id, name: campaign.name },
      sale: {
        id: uuid(7, j),
        currency,
        charged_at: iso(saleAt),
        stripe_account_id: 'acct_double',
        stripe_charge_id: `ch_${o.tag}${j}`,
        invoiced_at: iso(saleAt),
        created_at: iso(saleAt + 30_000),
        updated_at: iso(saleAt + 30_000),
        charge_amount_cents: saleCents,
        refund_amount_cents: 0,
        tax_amount_cents: 0,
        sale_amount_cents: saleCents,
        referral: referrals[i],
        affiliate: { id: a.id, email: a.email },
      },
    });
  }
  return { campaigns, affiliates, coupons, referrals, commissions };
}

// ---- Dub ----

export interface DubData {
  groups: Obj[];
  partners: Obj[];
  discountCodes: Obj[];
  customers: Obj[];
  commissions: Obj[];
}

export function startDub(data: DubData, apiKey: string, opts: DoubleOptions = {}): Promise<SourceDouble> {
  const lists: Record<string, (q: URLSearchParams) => Obj[]> = {
    '/groups': () => data.groups,
    '/partners': () => data.partners,
    '/discount-codes': () => data.discountCodes,
    '/customers': () => data.customers,
    '/commissions': (q) => {
      const status = q.get('status');
      return status === null ? data.commissions : data.commissions.filter((c) => c.status === status);
    },
  };
  return serve(
    (h) => h === `Bearer ${apiKey}`,
    {
      error: {
        code: 'unauthorized',
        message: 'Unauthorized: Invalid API key.',
        doc_url: 'https://dub.co/docs/api-reference/errors#unauthorized',
      },
    },
    (path, q) => {
      const list = lists[path];
      if (!list) return null;
      const size = Number(q.get('pageSize') ?? 100);
      if (!Number.isInteger(size) || size < 1 || size > 100)
        return {
          status: 422,
          body: { error: { code: 'unprocessable_entity', message: 'pageSize must be 1 to 100' } },
        };
      const all = [...list(q)].sort((a, b) => String(a.id).localeCompare(String(b.id)));
      const after = q.get('startingAfter');
      const from = after === null ? 0 : all.findIndex((x) => String(x.id) > after);
      return { status: 200, body: from < 0 ? [] : all.slice(from, from + size) };
    },
    opts.limit === undefined ? { requests: 60, windowMs: 60_000 } : opts.limit,
    (waitMs) => ({ 'retry-after': String(Math.max(1, Math.ceil(waitMs / 1000))) }),
  );
}
