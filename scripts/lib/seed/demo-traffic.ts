// About 30 days of demo traffic for the demo program (docs/dashboard.md "Demo data"), so the dashboard's
// charts, events and commissions show something on the first start: clicks with devices, browsers and
// places, leads, sales (a few repeat buyers), commissions (older ones paid), one full and one partial
// refund. Written the way the workers write them, in one transaction:
// - raw rows: click_events, customers, lead_events, sales;
// - commissions through the commission lifecycle (shared/commissions): `create` (payable_at from the
//   program's hold, review holds), `payAlone` at the time of payment, `refund`; the ledger entries they
//   cause applied with them. Their webhook events and notifications are not written: seeded history is
//   not news to anyone, and the demo workspace has no webhook endpoint yet;
// - the rollups program_daily_stats and program_daily_breakdown through the workers' RollupBuffer
//   (shared/rollups/dal.ts), each event under the keys the workers give it (a click its own, a lead
//   or a sale its customer's, remembered on the customer as the click worker does), from the rows inserted
//   here, so rollups and raw events agree;
// - balances through the ledger's own applyLedgerEntries (shared/ledger/dal.ts): the entries the lifecycle's
//   transitions returned (each commission's credit, its payment, its refund deduction);
// - link and partner-program click counters as the click worker keeps them.
// Idempotent: the first sale's transaction_id marks the program as seeded; an advisory lock serialises
// two starts. Deterministic (a seeded generator), relative to `now`.
import type { Tx } from '../../../shared/db/sql.ts';
import { RollupBuffer } from '../../../shared/rollups/dal.ts';
import { visitKeys } from '../../../shared/rollups/rules.ts';
import type { DimensionKeys } from '../../../shared/rollups/rules.ts';
import { applyLedgerEntries } from '../../../shared/ledger/dal.ts';
import * as lifecycle from '../../../shared/commissions/lifecycle.ts';
import type { NewCommission } from '../../../shared/commissions/lifecycle.ts';
import type { Caused } from '../../../shared/commissions/caused.ts';
import { EPOCH_MS, MAX_NODE, formatClickId } from '../../../shared/domain/ids.ts';
import { commissionAmount, parsePolicy } from '../../../shared/domain/commission-policy.ts';

export const DEMO_MARKER = 'demo-seed-sale-1';
const DAY = 86_400_000;
const MIN = 60_000;

export interface DemoLink {
  linkId: number;
  partnerId: number;
  partnerProgramId: number;
  /** Relative share of the clicks. */
  weight: number;
}

export interface TrafficSummary {
  seeded: boolean;
  clicks: number;
  leads: number;
  sales: number;
  refunds: number;
}

/** mulberry32: a small deterministic generator (the demo data is the same on every machine). */
function generator(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const weighted = <T>(items: readonly [T, number][]): T => {
    let r = next() * items.reduce((s, [, w]) => s + w, 0);
    for (const [v, w] of items) if ((r -= w) < 0) return v;
    return items[items.length - 1]![0];
  };
  return { next, int, pick, weighted };
}

const DEVICES: [
  { ua: string; device_type: string; device_os: string; browser_name: string; screen: string },
  number,
][] = [
  [
    {
      ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
      device_type: 'desktop',
      device_os: 'Windows',
      browser_name: 'Chrome',
      screen: '1920x1080',
    },
    30,
  ],
  [
    {
      ua: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
      device_type: 'desktop',
      device_os: 'macOS',
      browser_name: 'Safari',
      screen: '1512x982',
    },
    12,
  ],
  [
    {
      ua: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
      device_type: 'desktop',
      device_os: 'Linux',
      browser_name: 'Firefox',
      screen: '2560x1440',
    },
    5,
  ],
  [
    {
      ua: 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
      device_type: 'mobile',
      device_os: 'iOS',
      browser_name: 'Mobile Safari',
      screen: '390x844',
    },
    25,
  ],
  [
    {
      ua: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
      device_type: 'mobile',
      device_os: 'Android',
      browser_name: 'Chrome Mobile',
      screen: '412x915',
    },
    20,
  ],
  [
    {
      ua: 'Mozilla/5.0 (iPad; CPU OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
      device_type: 'tablet',
      device_os: 'iOS',
      browser_name: 'Mobile Safari',
      screen: '820x1180',
    },
    8,
  ],
];

const PLACES: [{ country: string; region: string; city: string; tz: string; lang: string }, number][] = [
  [
    { country: 'US', region: 'California', city: 'San Francisco', tz: 'America/Los_Angeles', lang: 'en-US' },
    18,
  ],
  [{ country: 'US', region: 'New York', city: 'New York', tz: 'America/New_York', lang: 'en-US' }, 14],
  [{ country: 'GB', region: 'England', city: 'London', tz: 'Europe/London', lang: 'en-GB' }, 12],
  [{ country: 'DE', region: 'Berlin', city: 'Berlin', tz: 'Europe/Berlin', lang: 'de-DE' }, 10],
  [{ country: 'FR', region: 'Île-de-France', city: 'Paris', tz: 'Europe/Paris', lang: 'fr-FR' }, 8],
  [{ country: 'CA', region: 'Ontario', city: 'Toronto', tz: 'America/Toronto', lang: 'en-CA' }, 7],
  [{ country: 'IN', region: 'Karnataka', city: 'Bengaluru', tz: 'Asia/Kolkata', lang: 'en-IN' }, 6],
  [{ country: 'BR', region: 'São Paulo', city: 'São Paulo', tz: 'America/Sao_Paulo', lang: 'pt-BR' }, 5],
  [{ country: 'AU', region: 'New South Wales', city: 'Sydney', tz: 'Australia/Sydney', lang: 'en-AU' }, 4],
];

const PAGES = [
  ['https://shop.example/', 'Demo Shop'],
  ['https://shop.example/pricing', 'Pricing · Demo Shop'],
  ['https://shop.example/features', 'Features · Demo Shop'],
  ['https://shop.example/blog/launch', 'We launched · Demo Shop'],
] as const;
const REFERRERS = [
  'https://www.google.com/',
  'https://twitter.com/',
  'https://news.ycombinator.com/',
  'https://partner-blog.example/review',
  null,
];
const PRODUCTS = [
  { id: 'starter', cents: 2900 },
  { id: 'pro', cents: 7900 },
  { id: 'team', cents: 19900 },
];
const REFUND_REASONS = ['Customer changed their mind', 'Duplicate purchase'];

/**
 * Seeds the demo traffic for `programId` into `tx` unless it is already there (DEMO_MARKER). Every event
 * lies in the 30 UTC days ending at `now` (today included), none after `now`.
 */
export async function seedDemoTraffic(
  tx: Tx,
  programId: number,
  links: DemoLink[],
  now = Date.now(),
): Promise<TrafficSummary> {
  await tx`select pg_advisory_xact_lock(hashtext('svc demo traffic'))`;
  const [done] = await tx`select 1 from sales where transaction_id = ${DEMO_MARKER}`;
  if (done) return { seeded: false, clicks: 0, leads: 0, sales: 0, refunds: 0 };
  const [program] = await tx<{ currency: string; commission: unknown; hold_days: number }[]>`
    select currency, commission, hold_days from programs where id = ${programId}`;
  const policy = parsePolicy(program!.commission);
  if (typeof policy === 'string') throw new Error(`demo program's commission policy: ${policy}`);
  const currency = program!.currency.trim();
  const rnd = generator(programId * 7919 + 17);
  const latest = now - MIN;
  const today = Math.floor(now / DAY);
  await tx`select ensure_click_event_partitions(${new Date((today - 31) * DAY)}, ${new Date(now)})`;
  // The program dates from before the traffic (period "all" starts at its creation); the first partner
  // joined on the first day, the others later (the Overview counts partners on the day they joined), and a
  // link has clicks only once its partner joined.
  const since = new Date((today - 30) * DAY + 9 * 3_600_000);
  await tx`update programs set created_at = least(created_at, ${since}) where id = ${programId}`;
  const joined = links.map((_, i) => (today - (i === 0 ? 29 : 12)) * DAY + 8 * 3_600_000);
  for (const [i, l] of links.entries()) {
    const at = new Date(joined[i]!);
    await tx`update partner_programs set created_at = least(created_at, ${at}) where id = ${l.partnerProgramId}`;
    await tx`update referral_links set created_at = least(created_at, ${at}) where id = ${l.linkId}`;
  }

  // Snowflake-shaped event ids for the click timestamps (node MAX_NODE, a sequence per millisecond).
  const seqs = new Map<number, number>();
  const eventId = (ms: number) => {
    const seq = seqs.get(ms) ?? 0;
    seqs.set(ms, seq + 1);
    return (BigInt(ms - EPOCH_MS) << 22n) | (BigInt(MAX_NODE) << 10n) | BigInt(seq);
  };

  const clicks: Record<string, unknown>[] = [];
  const customers: Record<string, unknown>[] = [];
  const leads: { click_id: string; key: string; email: string; ts: number; page: string; session: string }[] =
    [];
  const rollups = new RollupBuffer();
  const keysOf = new Map<string, DimensionKeys>();
  const linkCounts = new Map<number, { n: number; last: number; pp: number }>();
  let n = 0;
  for (let k = 29; k >= 0; k--) {
    const dayStart = (today - k) * DAY;
    // A rising trend with a weekly dip, about 20 to 60 clicks a day.
    const weekday = new Date(dayStart).getUTCDay();
    const base = 18 + (29 - k) * 1.1 + (weekday === 0 || weekday === 6 ? -6 : 4);
    const count = Math.max(4, Math.round(base + rnd.int(-5, 8)));
    for (let i = 0; i < count; i++) {
      const ts = dayStart + rnd.int(6 * 60, 23 * 60 + 50) * MIN + rnd.int(0, 59_999);
      if (ts > latest) continue;
      n++;
      const picked = rnd.weighted(links.map((l, j) => [j, l.weight] as [number, number]));
      const link = links[joined[picked]! <= ts ? picked : 0]!;
      const device = rnd.weighted(DEVICES);
      const place = rnd.weighted(PLACES);
      const [page, title] = rnd.pick(PAGES);
      const id = eventId(ts);
      const clickId = formatClickId(link.partnerProgramId, id);
      const session = `demo-sess-${n}`;
      const click = {
        event_id: id.toString(),
        click_timestamp: new Date(ts),
        program_id: programId,
        link_id: link.linkId,
        partner_id: link.partnerId,
        partner_program_id: link.partnerProgramId,
        click_id: clickId,
        is_test: false,
        session_id: session,
        page_url: `${page}?aff=demo`,
        page_title: title,
        referrer_url: rnd.pick(REFERRERS),
        user_agent: device.ua,
        geo_country: place.country,
        geo_region: place.region,
        geo_city: place.city,
        device_type: device.device_type,
        device_os: device.device_os,
        browser_name: device.browser_name,
        screen_resolution: device.screen,
        viewport_size: device.screen,
        language: place.lang,
        timezone: place.tz,
        created_at: new Date(ts),
      };
      clicks.push(click);
      const visit = visitKeys(click);
      const keys = { partner: String(link.partnerId), link: String(link.linkId), ...visit };
      keysOf.set(clickId, keys);
      rollups.add(programId, ts, { clicks: 1 }, keys);
      customers.push({
        click_id: clickId,
        program_id: programId,
        partner_id: link.partnerId,
        partner_program_id: link.partnerProgramId,
        link_id: link.linkId,
        customer_status: 'click',
        first_click_at: new Date(ts),
        last_click_at: new Date(ts),
        created_at: new Date(ts),
        attr_country: visit.country,
        attr_device: visit.device,
        attr_browser: visit.browser,
        attr_os: visit.os,
        attr_referrer: visit.referrer,
        attr_landing_page: visit.landing_page,
      });
      const lc = linkCounts.get(link.linkId) ?? { n: 0, last: 0, pp: link.partnerProgramId };
      linkCounts.set(link.linkId, { n: lc.n + 1, last: Math.max(lc.last, ts), pp: link.partnerProgramId });
      // About one click in four signs up, within minutes to hours.
      if (rnd.next() < 0.26) {
        const leadTs = ts + rnd.int(3, 240) * MIN;
        if (leadTs <= latest) {
          leads.push({
            click_id: clickId,
            key: `demo-customer-${n}`,
            email: `customer${n}@demo.example`,
            ts: leadTs,
            page: 'https://shop.example/signup',
            session,
          });
        }
      }
    }
  }

  // Raw clicks and their customers, then the click worker's counters.
  for (let i = 0; i < clicks.length; i += 1000) {
    const rows = clicks.slice(i, i + 1000);
    await tx`insert into click_events ${tx(rows as Record<string, unknown>[])}`;
    await tx`insert into customers ${tx(customers.slice(i, i + 1000) as Record<string, unknown>[])}`;
  }
  for (const [linkId, c] of [...linkCounts].sort(([a], [b]) => a - b)) {
    await tx`update referral_links set clicks = clicks + ${c.n},
               last_clicked = greatest(last_clicked, ${new Date(c.last)}), updated_at = now()
             where id = ${linkId}`;
  }
  const pps = new Map<number, { n: number; last: number }>();
  for (const c of linkCounts.values()) {
    const p = pps.get(c.pp) ?? { n: 0, last: 0 };
    pps.set(c.pp, { n: p.n + c.n, last: Math.max(p.last, c.last) });
  }
  for (const [pp, c] of [...pps].sort(([a], [b]) => a - b)) {
    await tx`update partner_programs set clicks = clicks + ${c.n},
               last_clicked_at = greatest(last_clicked_at, ${new Date(c.last)})
             where id = ${pp}`;
  }

  // Leads, then sales: about a third of the leads buy, some of them twice.
  const customerIds = new Map<string, { id: number; partner_id: number; partner_program_id: number }>();
  const idRows = await tx<{ id: string; click_id: string; partner_id: string; partner_program_id: string }[]>`
    select id, click_id, partner_id, partner_program_id from customers
    where click_id = any(${leads.map((l) => l.click_id)}::text[])`;
  for (const r of idRows) {
    customerIds.set(r.click_id, {
      id: Number(r.id),
      partner_id: Number(r.partner_id),
      partner_program_id: Number(r.partner_program_id),
    });
  }
  let saleNo = 0;
  const sales: {
    no: number;
    customer: { id: number; partner_id: number; partner_program_id: number };
    click_id: string;
    key: string;
    ts: number;
    cents: number;
    product: string;
    first: boolean;
  }[] = [];
  for (const [i, l] of leads.entries()) {
    const c = customerIds.get(l.click_id)!;
    await tx`
      insert into lead_events (request_id, program_id, customer_id, click_id, customer_key, email, event_name,
                               session_id, page_url, is_test, lead_timestamp, created_at)
      values (${`demo-seed-lead-${i + 1}`}, ${programId}, ${c.id}, ${l.click_id}, ${l.key}, ${l.email}, 'sign_up',
              ${l.session}, ${l.page}, false, ${new Date(l.ts)}, ${new Date(l.ts)})`;
    rollups.add(programId, l.ts, { leads: 1 }, keysOf.get(l.click_id));
    let status = 'lead';
    let firstPurchase: number | null = null;
    if (rnd.next() < 0.38) {
      const purchases = rnd.next() < 0.2 ? 2 : 1;
      let ts = l.ts;
      for (let p = 0; p < purchases; p++) {
        ts += rnd.int(10, p === 0 ? 2 * 24 * 60 : 10 * 24 * 60) * MIN;
        if (ts > latest) break;
        const product = rnd.weighted([
          [PRODUCTS[0]!, 5],
          [PRODUCTS[1]!, 3],
          [PRODUCTS[2]!, 1],
        ]);
        sales.push({
          no: ++saleNo,
          customer: c,
          click_id: l.click_id,
          key: l.key,
          ts,
          cents: product.cents,
          product: product.id,
          first: firstPurchase === null,
        });
        firstPurchase ??= ts;
        status = 'conversion';
      }
    }
    await tx`
      update customers set customer_status = ${status}, customer_key = ${l.key}, email = ${l.email},
        signup_date = ${new Date(l.ts)},
        first_purchase_date = ${firstPurchase === null ? null : new Date(firstPurchase)},
        first_commission_at = ${firstPurchase === null ? null : new Date(firstPurchase)},
        updated_at = now()
      where id = ${c.id}`;
  }

  // Sales in time order (the marker is the first); each earns its commission under the program's policy.
  sales.sort((a, b) => a.ts - b.ts);
  const earned: NewCommission[] = [];
  const saleOf = new Map<number, (typeof sales)[number]>();
  for (const [i, s] of sales.entries()) {
    const [sale] = await tx<{ id: string }[]>`
      insert into sales (request_id, program_id, customer_id, partner_id, partner_program_id, click_id,
                         customer_key, transaction_id, amount_cents, currency, sale_type, payment_status,
                         product_id, is_test, sale_date, created_at)
      values (${`demo-seed-sale-${i + 1}`}, ${programId}, ${s.customer.id}, ${s.customer.partner_id},
              ${s.customer.partner_program_id}, ${s.click_id}, ${s.key}, ${`demo-seed-sale-${i + 1}`},
              ${s.cents}, ${currency}, 'payment', 'paid', ${s.product}, false, ${new Date(s.ts)}, ${new Date(s.ts)})
      returning id`;
    const amount = commissionAmount(policy, s.cents, s.product);
    rollups.add(
      programId,
      s.ts,
      { sales: 1, revenue_cents: s.cents, conversions: s.first ? 1 : 0, commission_cents: amount },
      keysOf.get(s.click_id),
    );
    saleOf.set(Number(sale!.id), s);
    earned.push({
      sale_id: Number(sale!.id),
      program_id: programId,
      partner_id: s.customer.partner_id,
      partner_program_id: s.customer.partner_program_id,
      customer_id: s.customer.id,
      amount_cents: amount,
      currency,
      sale_ts: s.ts,
      hold_days: program!.hold_days,
      created_at: new Date(s.ts),
    });
  }
  const created = await lifecycle.create(tx, earned);
  const caused: Caused[] = [created.caused];
  const commissions = created.rows.map((r) => ({
    id: Number(r.id),
    saleId: Number(r.sale_id),
    sale: saleOf.get(Number(r.sale_id))!,
  }));

  // Commissions of sales older than 14 days were paid a week after the sale (one held for review is not).
  const paid = new Set<number>();
  for (const c of commissions.filter((c) => c.sale.ts < now - 14 * DAY)) {
    const outcome = await lifecycle.payAlone(tx, c.id, new Date(c.sale.ts + 7 * DAY));
    if (outcome && 'caused' in outcome) {
      caused.push(outcome.caused);
      paid.add(c.id);
    }
  }
  // Two refunds: a paid commission partly refunded, an unpaid one reversed in full.
  const paidList = commissions.filter((c) => paid.has(c.id));
  const refunds = [
    { c: paidList[Math.floor(paidList.length / 2)], cents: 1000 },
    { c: commissions.filter((c) => !paid.has(c.id) && c.sale.ts < now - 2 * DAY).at(-1), cents: null },
  ].filter((r): r is { c: (typeof commissions)[number]; cents: number | null } => r.c !== undefined);
  for (const [i, r] of refunds.entries()) {
    const outcome = await lifecycle.refund(tx, r.c.saleId, {
      sale_cents: r.c.sale.cents,
      refund_cents: r.cents,
      reason: REFUND_REASONS[i]!,
    });
    if (outcome && 'caused' in outcome) caused.push(outcome.caused);
  }
  await applyLedgerEntries(
    tx,
    caused.flatMap((c) => c.ledger),
  );
  await rollups.flush(tx);
  return {
    seeded: true,
    clicks: clicks.length,
    leads: leads.length,
    sales: sales.length,
    refunds: refunds.length,
  };
}
