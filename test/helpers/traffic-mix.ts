// A random (seeded) mix of tracking traffic through the real HTTP API: clicks from several countries,
// devices, referrers and pages on several links (some reusing their customer), test clicks, leads with and
// without a click, test leads, sales (repeat buyers, test sales) and full and partial refunds. What it sent
// is returned, so a test can hold the rollups to it as well as to the raw events.
import { postJson } from './stack.ts';
import type { LinkFixture, ProgramFixture } from './stack.ts';

/** Countries of the test GeoIP database (geoNetworks); 9.9.9.9 is in no network: `unknown`. */
export const GEO_IPS: Record<string, string | null> = {
  '5.1.2.3': 'DE',
  '2.2.3.4': 'FR',
  '8.8.8.8': 'US',
  '9.9.9.9': null,
};
/**
 * The `n`th address of the network of `ip` (its /24): each click of the mix comes from an address of its
 * own, in the same country, so no address comes near the per-IP click limit (RATE_LIMIT_BURST) however fast
 * the machine sends them. From four addresses, a fast machine tripped it (429) in rollups-crash.test.ts.
 */
export function addressNear(ip: string, n: number): string {
  const [a, b, c] = ip.split('.');
  return `${a}.${b}.${c}.${1 + (n % 254)}`;
}
export const geoNetworks = [
  { network: '5.1.0.0/16', data: { country_code: 'DE' } },
  { network: '2.2.0.0/16', data: { country_code: 'FR' } },
  { network: '8.8.8.0/24', data: { country_code: 'US' } },
];

export const USER_AGENTS = {
  iphone:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  chrome:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  firefox: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:127.0) Gecko/20100101 Firefox/127.0',
  curl: 'curl/8.5.0',
  none: '',
};
/** device, browser and OS keys of each user agent, as the enrichment step reads them. */
export const UA_KEYS: Record<keyof typeof USER_AGENTS, { device: string; browser: string; os: string }> = {
  iphone: { device: 'mobile', browser: 'Mobile Safari', os: 'iOS' },
  chrome: { device: 'desktop', browser: 'Chrome', os: 'Windows' },
  firefox: { device: 'desktop', browser: 'Firefox', os: 'Mac OS' },
  curl: { device: 'bot', browser: 'unknown', os: 'unknown' },
  none: { device: 'unknown', browser: 'unknown', os: 'unknown' },
};

/** Referrers and the key each counts under (host, lower case; `unknown` without one). */
export const REFERRERS: [string | undefined, string][] = [
  [undefined, 'unknown'],
  ['https://www.google.com/search?q=x', 'www.google.com'],
  ['HTTPS://News.Example.COM:8443/a/b#frag', 'news.example.com'],
  ['https://user:pw@blog.example.org/post', 'blog.example.org'],
  ['android-app://com.slack/', 'com.slack'],
  ['not a url', 'unknown'],
];
/** Landing pages and their keys (no query, no fragment). */
export const PAGES: [string | undefined, string][] = [
  [undefined, 'unknown'],
  ['https://shop.example/pricing?utm_source=x', 'https://shop.example/pricing'],
  ['https://shop.example/pricing#plans', 'https://shop.example/pricing'],
  ['https://shop.example/', 'https://shop.example/'],
  ['https://shop.example/blog/ünïcode?x=1', 'https://shop.example/blog/ünïcode'],
];

function generator(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  return { next, pick };
}

export interface SentClick {
  clickId: string;
  link: LinkFixture;
  country: string;
  device: string;
  browser: string;
  os: string;
  referrer: string;
  page: string;
  /** This click reused the customer of an earlier click (existing_click_id). */
  reused: boolean;
}

export interface SentSale {
  transactionId: string;
  /** The click id of the customer's first click (null: a lead without a click). */
  clickId: string | null;
  amount: number;
  commissionId: number | null;
}

export interface Mix {
  clicks: SentClick[];
  /** Customers (by first click id) who became leads. */
  leads: string[];
  /** Leads without a click, by customer_key. */
  unattributedLeads: string[];
  sales: SentSale[];
  refunds: number;
}

export interface MixOptions {
  baseUrl: string;
  program: ProgramFixture;
  links: LinkFixture[];
  seed: number;
  clicks: number;
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  /**
   * Called after each batch of clicks and after each lead and sale, with how many of that kind were
   * answered so far (e.g. to kill a worker: not awaited, the mix goes on and retries its 503s).
   */
  onProgress?: (phase: 'clicks' | 'leads' | 'sales', answered: number) => void;
}

const ok = (r: { status: number; body: Record<string, unknown> }, what: string) => {
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};

/** Sends the mix; every request must be answered 200 (a retry after a 503 is sent with the same key). */
export async function sendMix(o: MixOptions): Promise<Mix> {
  const rnd = generator(o.seed);
  const url = (p: string) => `${o.baseUrl}${p}`;
  const auth = { authorization: `Bearer ${o.program.token}` };
  const concurrency = o.concurrency ?? 4;
  const mix: Mix = { clicks: [], leads: [], unattributedLeads: [], sales: [], refunds: 0 };
  const tag = `${o.seed}-${Date.now()}`;

  // A request retried while the stack answers 503 (a worker being restarted): the same body and key.
  const post = async (path: string, body: unknown, headers: Record<string, string>, what: string) => {
    for (let attempt = 0; ; attempt++) {
      const r = await postJson(url(path), body, headers);
      if (r.status !== 503 || attempt > 1200) return ok(r, what);
      await new Promise((res) => setTimeout(res, 250));
    }
  };

  // Clicks, a few at a time.
  const pending: Promise<void>[] = [];
  const firstClickOf = new Map<number, SentClick[]>();
  for (let i = 0; i < o.clicks; i++) {
    const link = rnd.pick(o.links);
    const [ip, country] = rnd.pick(Object.entries(GEO_IPS));
    const ua = rnd.pick(Object.keys(USER_AGENTS) as (keyof typeof USER_AGENTS)[]);
    const [referrer, referrerKey] = rnd.pick(REFERRERS);
    const [page, pageKey] = rnd.pick(PAGES);
    const previous = firstClickOf.get(link.partnerId) ?? [];
    const reuse = previous.length > 0 && rnd.next() < 0.15 ? rnd.pick(previous) : null;
    const body: Record<string, unknown> = {
      affiliate_url: `https://shop.example/?aff=${link.shortLink}`,
      event_id: crypto.randomUUID(),
      ...(referrer === undefined ? {} : { referrer_url: referrer }),
      ...(page === undefined ? {} : { page_url: page }),
      ...(reuse ? { existing_click_id: reuse.clickId } : {}),
    };
    const headers = { 'user-agent': USER_AGENTS[ua], 'x-forwarded-for': addressNear(ip!, i) };
    pending.push(
      post('/api/v1/track/click', body, headers, 'click').then((b) => {
        const c: SentClick = {
          clickId: b.click_id as string,
          link,
          country: country ?? 'unknown',
          ...UA_KEYS[ua],
          referrer: referrerKey,
          page: pageKey,
          reused: reuse !== null,
        };
        mix.clicks.push(c);
        if (!reuse) firstClickOf.set(link.partnerId, [...previous, c]);
      }),
    );
    if (pending.length >= concurrency) {
      await Promise.all(pending.splice(0));
      o.onProgress?.('clicks', mix.clicks.length);
    }
    // Now and then a test click: stored, counted nowhere.
    if (rnd.next() < 0.05) {
      await post(
        '/api/v1/track/click',
        {
          affiliate_url: `https://shop.example/?aff=${link.shortLink}`,
          additional_data: { test_mode: true },
        },
        headers,
        'test click',
      );
    }
  }
  await Promise.all(pending);

  // Leads: about half of the customers, by click id (and key), server mode.
  const customers = [...new Set(mix.clicks.filter((c) => !c.reused).map((c) => c.clickId))];
  for (const clickId of customers) {
    if (rnd.next() < 0.5) {
      await post(
        '/api/v1/track/lead',
        { click_id: clickId, customer_key: `k-${clickId}` },
        { ...auth, 'idempotency-key': `lead-${clickId}` },
        'lead',
      );
      mix.leads.push(clickId);
      o.onProgress?.('leads', mix.leads.length);
    }
  }
  for (let i = 0; i < 3; i++) {
    const key = `no-click-${tag}-${i}`;
    await post('/api/v1/track/lead', { customer_key: key }, { ...auth, 'idempotency-key': key }, 'lead');
    mix.unattributedLeads.push(key);
  }
  await post(
    '/api/v1/track/lead',
    { customer_key: `test-${tag}`, additional_data: { test_mode: true } },
    auth,
    'test lead',
  );

  // Sales: about half of the leads buy, some twice; a few test sales.
  let n = 0;
  for (const clickId of mix.leads) {
    if (rnd.next() >= 0.5) continue;
    const times = rnd.next() < 0.3 ? 2 : 1;
    for (let k = 0; k < times; k++) {
      const transactionId = `txn-${tag}-${++n}`;
      const amount = 500 + Math.floor(rnd.next() * 20_000);
      const b = await post(
        '/api/v1/track/sale',
        { transaction_id: transactionId, amount_cents: amount, customer_key: `k-${clickId}` },
        { ...auth, 'idempotency-key': transactionId },
        'sale',
      );
      mix.sales.push({
        transactionId,
        clickId,
        amount,
        commissionId: (b.commission_id as number | null) ?? null,
      });
      o.onProgress?.('sales', mix.sales.length);
    }
  }
  await post(
    '/api/v1/track/sale',
    { transaction_id: `test-${tag}`, amount_cents: 999, additional_data: { test_mode: true } },
    auth,
    'test sale',
  );

  // Refunds: a full one and a partial one now and then; the rollups do not move (they count what was
  // earned on the day), the commission does.
  for (const s of mix.sales) {
    const roll = rnd.next();
    if (roll >= 0.3) continue;
    await post(
      '/api/v1/track/refund',
      roll < 0.15
        ? { transaction_id: s.transactionId }
        : { transaction_id: s.transactionId, refund_amount_cents: Math.ceil(s.amount / 3) },
      auth,
      'refund',
    );
    mix.refunds++;
  }
  return mix;
}
