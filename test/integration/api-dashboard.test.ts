// Dashboard reads (spec 4.5-4.7): GET /api/tracking/status|events|performance/:programId against the real
// web service and Postgres. The dataset is written with SQL: raw events on known days, customers, partner
// programs, sales (their commissions made by the commission lifecycle, test/helpers/commissions.ts), and the
// program_daily_stats rows computed from those raw rows by a separate
// function below (the way the workers keep them). Every expected number is computed in this file from the
// seed arrays, by the spec's definitions, never from what the endpoints return.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import type { Sql } from '../../shared/db/sql.ts';
import { generateSecret, hashSecret, maskSecret } from '../../shared/domain/secrets.ts';
import { createProgram, startServices, testSql } from '../helpers/stack.ts';
import { bearer, getJson, memberOf, signup } from '../helpers/accounts.ts';
import { createCommissions, refund } from '../helpers/commissions.ts';

const DAY = 86_400_000;

// Seeding and querying must happen on the same UTC day: wait out the last two minutes before midnight.
{
  const left = DAY - (Date.now() % DAY);
  if (left < 120_000) await new Promise((r) => setTimeout(r, left + 1000));
}

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const url = (p: string) => `${svc.baseUrl}${p}`;
const run = randomBytes(4).toString('hex');

const TODAY = Math.floor(Date.now() / DAY);
/** Epoch microseconds of day TODAY - k at hh:mm:ss.ms (+ extra µs). */
const at = (k: number, hh = 12, mm = 0, ss = 0, ms = 0, us = 0) =>
  ((TODAY - k) * DAY + hh * 3_600_000 + mm * 60_000 + ss * 1000 + ms) * 1000 + us;
const dayOf = (us: number) => Math.floor(us / 1000 / DAY);
const dayStr = (day: number) => new Date(day * DAY).toISOString().slice(0, 10);
const ago = (k: number) => dayStr(TODAY - k);
/** Full-precision timestamp for SQL. */
const sqlTs = (us: number) => {
  const ms = Math.floor(us / 1000);
  return `${new Date(ms).toISOString().slice(0, 23)}${String(us - ms * 1000).padStart(3, '0')}Z`;
};
/** What the API prints: milliseconds. */
const apiTs = (us: number) => new Date(Math.floor(us / 1000)).toISOString();

// ---------------------------------------------------------------------------------------------------
// Seed model

interface Pp {
  id?: number;
  partnerId?: number;
  status: 'approved' | 'pending';
  createdUs: number;
}
interface Customer {
  id?: number;
  clickId: string | null;
  status: 'click' | 'lead' | 'conversion';
  key: string | null;
  signupUs: number | null;
  firstPurchaseUs: number | null;
  pp: Pp | null;
}
interface Click {
  id: bigint;
  us: number;
  customer: Customer | null;
  test: boolean;
  n: number;
}
interface Lead {
  id?: string;
  us: number;
  customer: Customer | null;
  test: boolean;
  n: number;
}
interface Sale {
  id?: string;
  us: number;
  customer: Customer | null;
  amount: number;
  test: boolean;
  recurring?: boolean;
  saleType?: 'payment' | 'subscription';
  commission?: { amount: number; status: string } | null;
  n: number;
}
interface Dataset {
  programId: number;
  workspaceId: number;
  createdUs: number;
  pps: Pp[];
  customers: Customer[];
  clicks: Click[];
  leads: Lead[];
  sales: Sale[];
}

let eventSeq = (BigInt(Date.now()) << 22n) + 1000n * BigInt(process.pid % 1000);
const nextEventId = () => (eventSeq += 7n);

async function insertDataset(ds: Dataset): Promise<void> {
  await sql`update programs set created_at = ${sqlTs(ds.createdUs)}::text::timestamptz where id = ${ds.programId}`;
  for (const pp of ds.pps) {
    const [p] = await sql<{ id: string }[]>`
      insert into partners (workspace_id, name, email) values (${ds.workspaceId}, 'Partner', ${`p-${run}-${randomBytes(3).toString('hex')}@example.com`})
      returning id`;
    pp.partnerId = Number(p!.id);
    const [row] = await sql<{ id: string }[]>`
      insert into partner_programs (partner_id, program_id, status, created_at)
      values (${pp.partnerId}, ${ds.programId}, ${pp.status}, ${sqlTs(pp.createdUs)}::text::timestamptz) returning id`;
    pp.id = Number(row!.id);
  }
  for (const c of ds.customers) {
    const [row] = await sql<{ id: string }[]>`
      insert into customers (program_id, partner_id, partner_program_id, click_id, customer_status, customer_key,
                             signup_date, first_purchase_date)
      values (${ds.programId}, ${c.pp?.partnerId ?? null}, ${c.pp?.id ?? null}, ${c.clickId}, ${c.status}, ${c.key},
              ${c.signupUs === null ? null : sqlTs(c.signupUs)}::text::timestamptz,
              ${c.firstPurchaseUs === null ? null : sqlTs(c.firstPurchaseUs)}::text::timestamptz)
      returning id`;
    c.id = Number(row!.id);
  }
  for (const k of ds.clicks) {
    await sql`
      insert into click_events (event_id, click_timestamp, program_id, partner_id, partner_program_id, click_id, is_test,
                                session_id, page_url, referrer_url, geo_country, geo_region, geo_city, device_type,
                                device_os, browser_name, created_at)
      values (${k.id.toString()}, ${sqlTs(k.us)}::text::timestamptz, ${ds.programId}, ${k.customer?.pp?.partnerId ?? null},
              ${k.customer?.pp?.id ?? null}, ${k.customer?.clickId ?? null}, ${k.test}, ${`sess-${k.n}`},
              ${`https://shop.example/p/${k.n}`}, ${k.n % 2 ? 'https://ref.example/' : null}, 'DE', 'Berlin', 'Berlin',
              'mobile', 'iOS', 'Mobile Safari', ${sqlTs(k.us + 5000)}::text::timestamptz)`;
  }
  for (const l of ds.leads) {
    const [row] = await sql<{ id: string }[]>`
      insert into lead_events (request_id, program_id, customer_id, click_id, customer_key, session_id, page_url,
                               is_test, lead_timestamp, created_at)
      values (${`lead-${run}-${ds.programId}-${l.n}`}, ${ds.programId}, ${l.customer?.id ?? null},
              ${l.customer?.clickId ?? null}, ${l.customer?.key ?? `test-key-${l.n}`}, ${`lsess-${l.n}`},
              ${`https://shop.example/signup/${l.n}`}, ${l.test}, ${sqlTs(l.us)}::text::timestamptz,
              ${sqlTs(l.us + 7000)}::text::timestamptz)
      returning id::text`;
    l.id = row!.id;
  }
  for (const s of ds.sales) {
    const sub = s.saleType === 'subscription';
    const [row] = await sql<{ id: string }[]>`
      insert into sales (request_id, program_id, customer_id, partner_id, partner_program_id, click_id, customer_key,
                         transaction_id, amount_cents, currency, sale_type, payment_status, is_recurring,
                         subscription_id, subscription_interval, product_id, line_items, is_test, sale_date, created_at)
      values (${`sale-${run}-${ds.programId}-${s.n}`}, ${ds.programId}, ${s.customer?.id ?? null},
              ${s.customer?.pp?.partnerId ?? null}, ${s.customer?.pp?.id ?? null}, ${s.customer?.clickId ?? null},
              ${s.customer?.key ?? null}, ${`tx-${run}-${ds.programId}-${s.n}`}, ${s.amount}, 'USD',
              ${s.saleType ?? 'payment'}, 'paid', ${s.recurring ?? false}, ${sub ? `sub_${s.n}` : null},
              ${sub ? 'monthly' : null}, ${sub ? 'pro' : null},
              ${sub ? sql.json([{ product_id: 'pro', quantity: 1, amount_cents: s.amount }]) : null},
              ${s.test}, ${sqlTs(s.us)}::text::timestamptz, ${sqlTs(s.us + 9000)}::text::timestamptz)
      returning id::text`;
    s.id = row!.id;
    if (s.commission && s.customer?.pp) {
      // The commission as the attribution worker creates it (pending in the program's hold), reversed by a
      // full refund where the dataset says so.
      const [program] = await sql<
        { hold_days: number }[]
      >`select hold_days from programs where id = ${ds.programId}`;
      await createCommissions(sql, [
        {
          sale_id: Number(s.id),
          program_id: ds.programId,
          partner_id: s.customer.pp.partnerId!,
          partner_program_id: s.customer.pp.id!,
          customer_id: s.customer.id!,
          amount_cents: s.commission.amount,
          currency: 'USD',
          sale_ts: Math.floor(s.us / 1000),
          hold_days: program!.hold_days,
          created_at: new Date(Math.floor(s.us / 1000)),
        },
      ]);
      if (s.commission.status === 'reversed')
        await refund(sql, { saleId: Number(s.id), saleCents: s.amount }, null);
      else if (s.commission.status !== 'pending') throw new Error(`a ${s.commission.status} commission`);
    }
  }
  await rebuildDailyStats(sql, ds.programId);
}

/**
 * program_daily_stats from the raw rows, as the workers keep it: non-test clicks, leads and sales per
 * UTC day of their timestamp; a conversion on the day of a customer's first sale; revenue of the sales;
 * commission on the day of its sale.
 */
async function rebuildDailyStats(db: Sql, programId: number): Promise<void> {
  await db`delete from program_daily_stats where program_id = ${programId}`;
  await db`
    insert into program_daily_stats (program_id, day, clicks, leads, conversions, sales, revenue_cents, commission_cents)
    select ${programId}, day, sum(clicks), sum(leads), sum(conversions), sum(sales), sum(revenue), sum(commission)
    from (
      select (click_timestamp at time zone 'UTC')::date as day, 1 as clicks, 0 as leads, 0 as conversions, 0 as sales,
             0 as revenue, 0 as commission
      from click_events where program_id = ${programId} and not is_test
      union all
      select (lead_timestamp at time zone 'UTC')::date, 0, 1, 0, 0, 0, 0
      from lead_events where program_id = ${programId} and not is_test
      union all
      select (s.sale_date at time zone 'UTC')::date, 0, 0,
             (s.customer_id is not null and not exists (
                select 1 from sales p where p.customer_id = s.customer_id and not p.is_test
                  and (p.sale_date, p.id) < (s.sale_date, s.id)))::int,
             1, s.amount_cents, 0
      from sales s where s.program_id = ${programId} and not s.is_test
      union all
      select (s.sale_date at time zone 'UTC')::date, 0, 0, 0, 0, 0, c.amount_cents
      from commissions c join sales s on s.id = c.sale_id where c.program_id = ${programId}
    ) x
    group by day`;
}

// ---------------------------------------------------------------------------------------------------
// Accounts and programs

const owner = await signup(svc, { workspace: 'Dashboard tests' });
const W = owner.workspaceId;
const P = await createProgram(sql, { workspaceId: W });
const [w2] = await sql<{ id: string }[]>`insert into workspaces (name) values ('Second') returning id`;
const W2 = Number(w2!.id);
await sql`insert into memberships (user_id, workspace_id, role) values (${owner.userId}, ${W2}, 'owner')`;
const Q = await createProgram(sql, { workspaceId: W2 });
const connectedAt = '2024-05-06T07:08:09.123Z';
await sql`
  insert into processor_connections (workspace_id, status, account_id, charges_enabled, payouts_enabled,
                                     details_submitted, webhook_secret, connected_at)
  values (${W}, 'connected', 'acct_123', true, false, true, 'whsec_test', ${connectedAt}),
         (${W2}, 'restricted', null, false, false, false, 'whsec_test2', null)`;

// Program P: several days of everything, test events, boundary timestamps, equal timestamps.
let n = 0;
const pp1: Pp = { status: 'approved', createdUs: at(40, 9) };
const pps: Pp[] = [
  pp1,
  { status: 'pending', createdUs: at(3, 10) },
  { status: 'approved', createdUs: at(0, 0, 30) },
  { status: 'approved', createdUs: at(8, 14) },
];
const cust = (
  clickId: string | null,
  status: Customer['status'],
  key: string | null,
  signupUs: number | null,
  firstPurchaseUs: number | null,
  pp: Pp | null = pp1,
): Customer => ({
  clickId: clickId === null ? null : `cust_${P.id}_${clickId}${run}`,
  status,
  key: key === null ? null : `${key}-${run}`,
  signupUs,
  firstPurchaseUs,
  pp,
});
const c1 = cust('1', 'conversion', 'user-1', at(20, 11), at(3, 9));
const c2 = cust('2', 'lead', 'user-2', at(10, 13), null);
const c3 = cust('3', 'click', null, null, null);
const c4 = cust('4', 'conversion', 'user-4', at(35, 10), at(35, 11));
const c5 = cust('5', 'conversion', null, null, at(0, 12));
const c6 = cust(null, 'lead', 'user-6', at(1, 15), null, null);
const click = (us: number, customer: Customer | null, test = false, id = nextEventId()): Click => ({
  id,
  us,
  customer,
  test,
  n: ++n,
});
const tieA = nextEventId();
const tieB = nextEventId();
const pClicks: Click[] = [
  click(at(20, 10), c1),
  click(at(10, 12), c2),
  click(at(3, 8), c3),
  click(at(3, 23, 59, 59, 999, 999), c3), // the last microsecond of its day
  click(at(5, 12), c3, false, tieA), // two clicks at the same instant: the larger id comes first
  click(at(5, 12), c3, false, tieB),
  click(at(35, 9), c4),
  click(at(0, 0), c5), // the first microsecond of today
];
for (let i = 0; i < 24; i++) pClicks.push(click(at(i % 12, (i * 7) % 24, i), c3));
const pTestClicks = Array.from({ length: 12 }, (_, i) => click(at(2, 8, i), null, true));
const lead = (us: number, customer: Customer | null, test = false): Lead => ({ us, customer, test, n: ++n });
const pLeads = [lead(at(20, 11), c1), lead(at(10, 13), c2), lead(at(35, 10), c4), lead(at(1, 15), c6)];
const pTestLeads = [
  lead(at(4, 10), null, true),
  lead(at(4, 10, 2), null, true),
  lead(at(4, 10, 1), null, true),
];
const sale = (us: number, customer: Customer | null, amount: number, extra: Partial<Sale> = {}): Sale => ({
  us,
  customer,
  amount,
  test: false,
  commission: customer ? { amount: Math.round(amount / 5), status: 'pending' } : null,
  n: ++n,
  ...extra,
});
const pSales = [
  sale(at(3, 9), c1, 5000),
  sale(at(0, 1), c1, 2500, {
    saleType: 'subscription',
    recurring: true,
    commission: { amount: 500, status: 'reversed' },
  }),
  sale(at(35, 11), c4, 10000),
  sale(at(0, 12), c5, 1999),
];
const pTestSales = [sale(at(1, 9), null, 700, { test: true }), sale(at(1, 10), null, 800, { test: true })];
const dsP: Dataset = {
  programId: P.id,
  workspaceId: W,
  createdUs: at(40, 8),
  pps,
  customers: [c1, c2, c3, c4, c5, c6],
  clicks: [...pClicks, ...pTestClicks],
  leads: [...pLeads, ...pTestLeads],
  sales: [...pSales, ...pTestSales],
};

// Program Q: trend edge cases over 7d. Clicks 6 → 4 (33.3 down), leads 0 → 0 (stable), conversions,
// sales, revenue, commission 0 → 1 (100 up), partners 1 → 0 (100 down). Only a pending partner.
const qpp: Pp = { status: 'pending', createdUs: at(10, 9) };
const q1: Customer = {
  clickId: `cust_${Q.id}_1${run}`,
  status: 'conversion',
  key: null,
  signupUs: null,
  firstPurchaseUs: at(2, 10),
  pp: qpp,
};
const dsQ: Dataset = {
  programId: Q.id,
  workspaceId: W2,
  createdUs: at(20, 0),
  pps: [qpp],
  customers: [q1],
  clicks: [
    ...[7, 8, 9, 10, 11, 13].map((k) => click(at(k, 9), q1)),
    ...[0, 2, 4, 6].map((k) => click(at(k, 9), q1)),
  ],
  leads: [],
  sales: [sale(at(2, 10), q1, 1000, { commission: { amount: 100, status: 'pending' } })],
};
await insertDataset(dsP);
await insertDataset(dsQ);

// ---------------------------------------------------------------------------------------------------
// Expected values, from the seed arrays

interface Expected {
  kind: 'click' | 'lead' | 'conversion';
  us: number;
  id: string;
  item: Record<string, unknown>;
}
function expectedEvents(ds: Dataset): Expected[] {
  const all: Expected[] = [];
  for (const k of ds.clicks.filter((c) => !c.test)) {
    all.push({
      kind: 'click',
      us: k.us,
      id: k.id.toString(),
      item: {
        id: k.id.toString(),
        event_type: 'click',
        timestamp: apiTs(k.us),
        createdAt: apiTs(k.us + 5000),
        click_id: k.customer?.clickId ?? null,
        session_id: `sess-${k.n}`,
        page_url: `https://shop.example/p/${k.n}`,
        referrer_url: k.n % 2 ? 'https://ref.example/' : null,
        geo_country: 'DE',
        geo_region: 'Berlin',
        geo_city: 'Berlin',
        device_type: 'mobile',
        device_os: 'iOS',
        browser_name: 'Mobile Safari',
        quality: 'human',
        converted: k.customer?.status === 'conversion',
      },
    });
  }
  for (const l of ds.leads.filter((x) => !x.test)) {
    all.push({
      kind: 'lead',
      us: l.us,
      id: l.id!,
      item: {
        id: l.id!,
        event_type: 'lead',
        timestamp: apiTs(l.us),
        createdAt: apiTs(l.us + 7000),
        click_id: l.customer?.clickId ?? null,
        customer_key: l.customer?.key ?? null,
        session_id: `lsess-${l.n}`,
        page_url: `https://shop.example/signup/${l.n}`,
        converted: l.customer?.status === 'conversion',
      },
    });
  }
  for (const s of ds.sales.filter((x) => !x.test)) {
    const sub = s.saleType === 'subscription';
    all.push({
      kind: 'conversion',
      us: s.us,
      id: s.id!,
      item: {
        id: s.id!,
        event_type: 'conversion',
        timestamp: apiTs(s.us),
        createdAt: apiTs(s.us + 9000),
        click_id: s.customer?.clickId ?? null,
        amount_cents: s.amount,
        currency: 'USD',
        sale_type: s.saleType ?? 'payment',
        payment_status: 'paid',
        processor_event_id: `tx-${run}-${ds.programId}-${s.n}`,
        is_recurring: s.recurring ?? false,
        line_items: sub ? [{ product_id: 'pro', quantity: 1, amount_cents: s.amount }] : null,
        subscription_id: sub ? `sub_${s.n}` : null,
        subscription_interval: sub ? 'monthly' : null,
        product_id: sub ? 'pro' : null,
        coupon_code: null,
      },
    });
  }
  const cmpId = (a: string, b: string) => {
    const x = BigInt(a);
    const y = BigInt(b);
    return x > y ? -1 : x < y ? 1 : 0;
  };
  return all.sort(
    (a, b) => b.us - a.us || cmpId(a.id, b.id) || (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0),
  );
}

interface DayRow {
  date: string;
  period: string;
  clicks: number;
  leads: number;
  conversions: number;
  revenue: number;
  partners: number;
  sales: number;
  commission: number;
  filteredClicks: number;
}
/** Spec 4.7 definitions, over the seed arrays. Also the paid sale count and the cents, for totals. */
function expectedDay(ds: Dataset, day: number) {
  const on = (us: number | null) => us !== null && dayOf(us) === day;
  const sales = ds.sales.filter((s) => !s.test && on(s.us));
  const revenueCents = sales.reduce((a, s) => a + s.amount, 0);
  const commissionCents = sales.reduce(
    (a, s) => a + (s.customer?.pp && s.commission ? s.commission.amount : 0),
    0,
  );
  const row: DayRow = {
    date: dayStr(day),
    period: dayStr(day),
    clicks: ds.clicks.filter((c) => !c.test && on(c.us)).length,
    leads: ds.customers.filter((c) => on(c.signupUs) && (c.status === 'lead' || c.status === 'conversion'))
      .length,
    conversions: ds.customers.filter((c) => on(c.firstPurchaseUs) && c.status === 'conversion').length,
    revenue: revenueCents / 100,
    partners: ds.pps.filter((p) => on(p.createdUs)).length,
    sales: 0,
    commission: commissionCents / 100,
    // Every seeded click is a person's (click_events.quality defaults to human).
    filteredClicks: 0,
  };
  return { row, paidSales: sales.length, revenueCents, commissionCents };
}

const round = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d;
function expectedTrend(cur: number, prev: number) {
  if (prev === 0)
    return cur > 0 ? { trend: 100, trendDirection: 'up' } : { trend: 0, trendDirection: 'stable' };
  const change = ((cur - prev) / prev) * 100;
  return {
    trend: round(Math.abs(change), 1),
    trendDirection: change > 0 ? 'up' : change < 0 ? 'down' : 'stable',
  };
}
function expectedPerformance(ds: Dataset, first: number, last: number, period: string) {
  const sum = (a: number, b: number) => {
    const t = { clicks: 0, leads: 0, conversions: 0, partners: 0, sales: 0, revenue: 0, commission: 0 };
    for (let d = a; d <= b; d++) {
      const e = expectedDay(ds, d);
      t.clicks += e.row.clicks;
      t.leads += e.row.leads;
      t.conversions += e.row.conversions;
      t.partners += e.row.partners;
      t.sales += e.paidSales;
      t.revenue += e.revenueCents;
      t.commission += e.commissionCents;
    }
    return t;
  };
  const days = last - first + 1;
  const cur = sum(first, last);
  const prev = sum(first - days, first - 1);
  const data: DayRow[] = [];
  for (let d = first; d <= last; d++) data.push(expectedDay(ds, d).row);
  return {
    data,
    metrics: {
      totalClicks: cur.clicks,
      filteredClicks: 0,
      totalLeads: cur.leads,
      totalConversions: cur.conversions,
      totalRevenue: round(cur.revenue / 100, 2),
      conversionRate: cur.clicks ? round((cur.conversions / cur.clicks) * 100, 2) : 0,
      averageOrderValue: cur.conversions ? round(cur.revenue / 100 / cur.conversions, 2) : 0,
      totalPartners: cur.partners,
      totalSales: cur.sales,
      totalPartnersCommission: round(cur.commission / 100, 2),
      clicksTrend: expectedTrend(cur.clicks, prev.clicks),
      leadsTrend: expectedTrend(cur.leads, prev.leads),
      conversionsTrend: expectedTrend(cur.conversions, prev.conversions),
      revenueTrend: expectedTrend(cur.revenue, prev.revenue),
      partnersTrend: expectedTrend(cur.partners, prev.partners),
      salesTrend: expectedTrend(cur.sales, prev.sales),
      commissionTrend: expectedTrend(cur.commission, prev.commission),
    },
    meta: {
      period,
      dateFrom: `${dayStr(first)}T00:00:00.000Z`,
      dateTo: `${dayStr(last)}T23:59:59.999Z`,
      previousPeriod: {
        dateFrom: `${dayStr(first - days)}T00:00:00.000Z`,
        dateTo: `${dayStr(first - 1)}T23:59:59.999Z`,
      },
    },
  };
}

const get = (path: string, session = owner.session) => getJson(url(path), bearer(session));
const eventsOf = async (qs: string, programId = P.id) => {
  const r = await get(`/api/tracking/events/${programId}${qs}`);
  return {
    status: r.status,
    body: r.body,
    data: r.body.data as Record<string, unknown>[],
    pagination: (r.body.meta as { pagination: Record<string, number> } | undefined)?.pagination,
  };
};

/** A plain count of the non-test events in [lo, hi) (µs; null = open), straight from the tables. */
async function plainCount(programId: number, kinds: string[], lo: number | null, hi: number | null) {
  const from = lo === null ? '-infinity' : sqlTs(lo);
  const to = hi === null ? 'infinity' : sqlTs(hi);
  const [r] = await sql<{ n: number }[]>`
    select (
      (select count(*) from click_events where ${kinds.includes('click')} and program_id = ${programId} and not is_test
         and click_timestamp >= ${from}::text::timestamptz and click_timestamp < ${to}::text::timestamptz)
    + (select count(*) from lead_events where ${kinds.includes('lead')} and program_id = ${programId} and not is_test
         and lead_timestamp >= ${from}::text::timestamptz and lead_timestamp < ${to}::text::timestamptz)
    + (select count(*) from sales where ${kinds.includes('conversion')} and program_id = ${programId} and not is_test
         and sale_date >= ${from}::text::timestamptz and sale_date < ${to}::text::timestamptz))::int as n`;
  return r!.n;
}

const expP = expectedEvents(dsP);
const ALL_KINDS = ['click', 'lead', 'conversion'];

// ---------------------------------------------------------------------------------------------------
// Status

t.test(
  'status: test events (up to 10), latest test event, payments from the processor connection, partners',
  async (t) => {
    const r = await get(`/api/tracking/status/${P.id}`);
    t.equal(r.status, 200);
    const d = r.body.data as Record<string, unknown>;
    const latestClick = pTestClicks[11]!;
    const latestLead = pTestLeads[1]!;
    t.same(
      { ...d, lastUpdated: undefined },
      {
        programId: String(P.id),
        stepStatuses: { pageview: 'complete', referrals: 'complete', payments: 'complete' },
        statistics: {
          pageview: {
            testEventCount: 10,
            hasTestEvents: true,
            latestTestEvent: {
              id: latestClick.id.toString(),
              timestamp: apiTs(latestClick.us),
              createdAt: apiTs(latestClick.us + 5000),
            },
          },
          referrals: {
            testEventCount: 3,
            hasTestEvents: true,
            latestTestEvent: {
              id: latestLead.id,
              timestamp: apiTs(latestLead.us),
              createdAt: apiTs(latestLead.us + 7000),
            },
          },
          payments: {
            processorConnectionStatus: 'connected',
            isProcessorConnected: true,
            processorAccountId: 'acct_123',
            chargesEnabled: true,
            payoutsEnabled: false,
            detailsSubmitted: true,
            connectionDate: connectedAt,
          },
        },
        hasPartners: true,
        filteredClicks: 0,
        lastUpdated: undefined,
      },
    );
    t.ok(Math.abs(Date.parse(d.lastUpdated as string) - Date.now()) < 60_000, 'lastUpdated is now');
    t.equal(pTestClicks.length, 12, 'twelve test clicks exist; ten are reported');

    const q = await get(`/api/tracking/status/${Q.id}`);
    t.equal(q.status, 200);
    t.same(
      q.body.data,
      {
        programId: String(Q.id),
        stepStatuses: { pageview: 'pending', referrals: 'pending', payments: 'pending' },
        statistics: {
          pageview: { testEventCount: 0, hasTestEvents: false, latestTestEvent: null },
          referrals: { testEventCount: 0, hasTestEvents: false, latestTestEvent: null },
          payments: {
            processorConnectionStatus: 'restricted',
            isProcessorConnected: false,
            processorAccountId: null,
            chargesEnabled: false,
            payoutsEnabled: false,
            detailsSubmitted: false,
            connectionDate: null,
          },
        },
        hasPartners: false,
        filteredClicks: 0,
        lastUpdated: (q.body.data as { lastUpdated: string }).lastUpdated,
      },
      'nothing yet: all pending, raw status, a pending partner is not a partner',
    );

    // Without a processor connection at all.
    const other = await createProgram(sql, { workspaceId: W2 });
    await sql`delete from processor_connections where workspace_id = ${W2}`;
    const o = await get(`/api/tracking/status/${other.id}`);
    t.match(o.body.data, {
      programId: String(other.id),
      statistics: {
        payments: {
          processorConnectionStatus: 'not_connected',
          isProcessorConnected: false,
          connectionDate: null,
        },
      },
    });
  },
);

// ---------------------------------------------------------------------------------------------------
// Events

t.test('events: merged newest first, every field, test events excluded, total exact', async (t) => {
  const r = await eventsOf('?pageSize=100');
  t.equal(r.status, 200);
  t.ok(expP.length > 20 && expP.length <= 100, `dataset of ${expP.length} events fits one page of 100`);
  t.same(
    r.data,
    expP.map((e) => e.item),
    'the whole list, in order, with every field',
  );
  t.same(r.pagination, { page: 1, pageSize: 100, pageCount: 1, total: expP.length });
  t.equal(r.pagination!.total, await plainCount(P.id, ALL_KINDS, null, null), 'total equals a plain count');
  const ids = new Set(r.data.map((e) => `${e.event_type as string}:${e.id as string}`));
  for (const x of [
    ...pTestClicks.map((c) => `click:${c.id}`),
    ...pTestLeads.map((l) => `lead:${l.id!}`),
    ...pTestSales.map((s) => `conversion:${s.id!}`),
  ])
    t.notOk(ids.has(x), `test event ${x} excluded`);
  // Equal timestamps: the larger id first.
  const a = r.data.findIndex((e) => e.id === tieA.toString());
  const b = r.data.findIndex((e) => e.id === tieB.toString());
  t.ok(b >= 0 && a === b + 1, 'same instant: ordered by id descending');
  t.equal(
    r.data.find((e) => e.id === pClicks[0]!.id.toString())!.converted,
    true,
    "a converted customer's click",
  );
  t.equal(r.data.find((e) => e.id === pClicks[1]!.id.toString())!.converted, false, "a lead's click");
  t.equal(r.data.find((e) => e.event_type === 'lead' && e.id === pLeads[0]!.id)!.converted, true);
  t.equal(r.data.find((e) => e.event_type === 'lead' && e.id === pLeads[3]!.id)!.converted, false);

  const def = await eventsOf('');
  t.same(
    def.data,
    expP.slice(0, 10).map((e) => e.item),
    'defaults: page 1 of 10',
  );
  t.same(def.pagination, {
    page: 1,
    pageSize: 10,
    pageCount: Math.ceil(expP.length / 10),
    total: expP.length,
  });
});

t.test('events: pagination at every offset, edges, beyond the last page', async (t) => {
  const total = expP.length;
  for (let page = 1; page <= total; page++) {
    const r = await eventsOf(`?pageSize=1&page=${page}`);
    t.same(r.data, [expP[page - 1]!.item], `pageSize 1, page ${page}`);
    t.same(r.pagination, { page, pageSize: 1, pageCount: total, total });
  }
  const seven: unknown[] = [];
  for (let page = 1; page <= Math.ceil(total / 7); page++) {
    const r = await eventsOf(`?pageSize=7&page=${page}`);
    seven.push(...r.data);
  }
  t.same(
    seven,
    expP.map((e) => e.item),
    'pages of 7 concatenated are the whole list',
  );
  const last = await eventsOf(`?pageSize=7&page=${Math.ceil(total / 7)}`);
  t.equal(last.data.length, total % 7 || 7, 'the last page is partial');
  const beyond = await eventsOf(`?pageSize=7&page=${Math.ceil(total / 7) + 1}`);
  t.equal(beyond.status, 200);
  t.same(beyond.data, [], 'beyond the last page: data is []');
  t.same(beyond.pagination, {
    page: Math.ceil(total / 7) + 1,
    pageSize: 7,
    pageCount: Math.ceil(total / 7),
    total,
  });
  const far = await eventsOf('?page=1000000');
  t.same(far.data, []);
  t.equal(far.pagination!.total, total);
  t.equal((await eventsOf('?pageSize=100')).data.length, total, 'pageSize 100 is allowed');
});

t.test('events: bad page, pageSize, eventType, dates are 400', async (t) => {
  const cases: [string, string][] = [
    ['?pageSize=0', 'pageSize must be an integer between 1 and 100'],
    ['?pageSize=101', 'pageSize must be an integer between 1 and 100'],
    ['?pageSize=-1', 'pageSize must be an integer between 1 and 100'],
    ['?pageSize=1.5', 'pageSize must be an integer between 1 and 100'],
    ['?pageSize=ten', 'pageSize must be an integer between 1 and 100'],
    ['?pageSize=', 'pageSize must be an integer between 1 and 100'],
    ['?page=0', 'page must be an integer of at least 1'],
    ['?page=-2', 'page must be an integer of at least 1'],
    ['?page=2.0', 'page must be an integer of at least 1'],
    ['?page=1&page=2', 'page must be given once'],
    ['?eventType=sale', 'eventType must be one of click, lead, conversion (or all)'],
    ['?eventType=CLICK', 'eventType must be one of click, lead, conversion (or all)'],
    [
      '?dateFrom=yesterday',
      'dateFrom must be an ISO 8601 date or date-time (e.g. 2025-01-31 or 2025-01-31T12:00:00Z)',
    ],
    [
      '?dateTo=2025-02-30',
      'dateTo must be an ISO 8601 date or date-time (e.g. 2025-01-31 or 2025-01-31T12:00:00Z)',
    ],
    [
      '?dateTo=2025-01-01T25:00:00Z',
      'dateTo must be an ISO 8601 date or date-time (e.g. 2025-01-31 or 2025-01-31T12:00:00Z)',
    ],
    [`?dateFrom=${ago(1)}&dateTo=${ago(2)}`, 'dateFrom must not be after dateTo'],
    [`?dateFrom=${ago(1)}T10:00:00.001Z&dateTo=${ago(1)}T10:00:00Z`, 'dateFrom must not be after dateTo'],
  ];
  for (const [qs, error] of cases) {
    const r = await eventsOf(qs);
    t.equal(r.status, 400, qs);
    t.same(r.body, { error }, qs);
  }
});

t.test('events: eventType and date filters (inclusive, whole and partial days), totals exact', async (t) => {
  const check = async (qs: string, kinds: string[], lo: number | null, hi: number | null) => {
    const exp = expP.filter(
      (e) => kinds.includes(e.kind) && (lo === null || e.us >= lo) && (hi === null || e.us < hi),
    );
    const r = await eventsOf(`${qs}&pageSize=100`);
    t.equal(r.status, 200, qs);
    t.same(
      r.data,
      exp.map((e) => e.item),
      `${qs}: the filtered list`,
    );
    t.equal(r.pagination!.total, exp.length, `${qs}: total`);
    t.equal(r.pagination!.total, await plainCount(P.id, kinds, lo, hi), `${qs}: total equals a plain count`);
    t.equal(r.pagination!.pageCount, Math.ceil(exp.length / 100));
    // Small pages over the filtered range: every page where it belongs.
    const pages: unknown[] = [];
    for (let page = 1; page <= Math.ceil(exp.length / 3) + 1; page++) {
      const p = await eventsOf(`${qs}&pageSize=3&page=${page}`);
      t.equal(p.pagination!.total, exp.length);
      pages.push(...p.data);
    }
    t.same(
      pages,
      exp.map((e) => e.item),
      `${qs}: pages of 3`,
    );
    return exp.length;
  };
  for (const k of ALL_KINDS) t.ok((await check(`?eventType=${k}`, [k], null, null)) > 0, k);
  t.equal(await check('?eventType=all', ALL_KINDS, null, null), expP.length);
  // Whole days (date only): dateTo includes its whole day, down to the last microsecond.
  const n1 = await check(`?dateFrom=${ago(5)}&dateTo=${ago(3)}`, ALL_KINDS, at(5, 0), at(2, 0));
  t.ok(n1 >= 6, 'several events on those days');
  t.ok(
    (await eventsOf(`?dateFrom=${ago(3)}&dateTo=${ago(3)}&pageSize=100`)).data.some(
      (e) => e.id === pClicks[3]!.id.toString(),
    ),
    '23:59:59.999999 is inside dateTo (date only)',
  );
  // Date-times: inclusive at both ends, partial first and last days.
  await check(`?dateFrom=${ago(3)}T08:00:00Z&dateTo=${ago(0)}T00:00:00Z`, ALL_KINDS, at(3, 8), at(0, 0) + 1);
  await check(
    `?dateFrom=${ago(3)}T08:00:00.000001Z&dateTo=${ago(0)}T00:00:00Z&eventType=click`,
    ['click'],
    at(3, 8) + 1,
    at(0, 0) + 1,
  );
  await check(`?dateTo=${ago(3)}T23:59:59.999Z`, ALL_KINDS, null, at(3, 23, 59, 59, 999) + 1);
  await check(`?dateTo=${ago(3)}T23:59:59.999999Z`, ALL_KINDS, null, at(2, 0));
  await check(`?dateFrom=${ago(10)}T12:30:00%2B02:00`, ALL_KINDS, at(10, 10, 30), null);
  await check(`?dateFrom=${ago(10)}T12:30:00 02:00`, ALL_KINDS, at(10, 10, 30), null); // "+" decoded as a space
  await check(`?dateFrom=${ago(3)}T09:00&dateTo=${ago(3)}T09:00`, ALL_KINDS, at(3, 9), at(3, 9) + 1); // one instant
  await check(
    `?dateFrom=${ago(1)}T00:00:00Z&dateTo=${ago(0)}T11:59:59Z&eventType=conversion`,
    ['conversion'],
    at(1, 0),
    at(0, 11, 59, 59) + 1,
  );
  await check(`?dateFrom=${ago(60)}&dateTo=${ago(50)}`, ALL_KINDS, at(60, 0), at(49, 0)); // nothing there
  await check(
    `?dateFrom=${ago(12)}T05:00:00Z&dateTo=${ago(2)}T20:00:00Z&eventType=click`,
    ['click'],
    at(12, 5),
    at(2, 20) + 1,
  );
});

// ---------------------------------------------------------------------------------------------------
// Performance

t.test('performance: 7d, 30d, 90d, all and a custom range against the raw rows', async (t) => {
  const cases: [string, number, number, string][] = [
    ['', TODAY - 6, TODAY, '7d'],
    ['?period=7d', TODAY - 6, TODAY, '7d'],
    ['?period=30d', TODAY - 29, TODAY, '30d'],
    ['?period=90d', TODAY - 89, TODAY, '90d'],
    ['?period=all', TODAY - 40, TODAY, 'all'],
    [`?dateFrom=${ago(12)}&dateTo=${ago(2)}`, TODAY - 12, TODAY - 2, 'custom'],
    [
      `?dateFrom=${ago(12)}T18:00:00Z&dateTo=${ago(2)}T01:00:00Z&period=bogus`,
      TODAY - 12,
      TODAY - 2,
      'custom',
    ],
    [`?dateFrom=${ago(3)}&dateTo=${ago(0)}`, TODAY - 3, TODAY, 'custom'],
  ];
  for (const [qs, first, last, period] of cases) {
    const r = await get(`/api/tracking/performance/${P.id}${qs}`);
    t.equal(r.status, 200, qs);
    const exp = expectedPerformance(dsP, first, last, period);
    t.equal((r.body.data as unknown[]).length, last - first + 1, `${qs}: one row per day`);
    t.same(r.body.data, exp.data, `${qs}: rows`);
    t.same(r.body.metrics, exp.metrics, `${qs}: metrics`);
    t.same(r.body.meta, exp.meta, `${qs}: meta`);
  }
  // Spot checks of the definitions on 7d, written out by hand.
  const r = await get(`/api/tracking/performance/${P.id}?period=7d`);
  const m = r.body.metrics as Record<string, unknown>;
  t.equal(m.totalRevenue, 94.99, '5000 + 2500 + 1999 cents of paid sales');
  t.equal(m.totalSales, 3);
  t.equal(m.totalConversions, 2, 'first purchases: c1 (3 days ago) and c5 (today)');
  t.equal(m.averageOrderValue, 47.5, '94.99 / 2, rounded to 2 decimals');
  t.equal(m.totalLeads, 1, 'c6 signed up yesterday');
  t.equal(m.totalPartners, 2);
  t.equal(m.totalPartnersCommission, 19, '1000 + 500 (reversed, still created) + 400 cents');
  const rows = r.body.data as DayRow[];
  t.ok(
    rows.every((row) => row.sales === 0),
    'sales in rows are always 0',
  );
  t.match(rows[6], {
    date: ago(0),
    period: ago(0),
    revenue: 44.99,
    conversions: 1,
    partners: 1,
    commission: 9,
  });
  const all = await get(`/api/tracking/performance/${P.id}?period=all`);
  t.equal((all.body.data as DayRow[])[0]!.date, ago(40), 'all starts at the program creation day');
  t.equal((all.body.metrics as { totalClicks: number }).totalClicks, pClicks.length);
});

t.test('performance trends: previous 0 → 100 up, both 0 → stable, decrease → down, absolute', async (t) => {
  const r = await get(`/api/tracking/performance/${Q.id}`);
  t.equal(r.status, 200);
  t.match(r.body.metrics, {
    totalClicks: 4,
    totalConversions: 1,
    conversionRate: 25,
    averageOrderValue: 10,
    totalRevenue: 10,
    totalSales: 1,
    totalPartners: 0,
    totalPartnersCommission: 1,
    clicksTrend: { trend: 33.3, trendDirection: 'down' },
    leadsTrend: { trend: 0, trendDirection: 'stable' },
    conversionsTrend: { trend: 100, trendDirection: 'up' },
    revenueTrend: { trend: 100, trendDirection: 'up' },
    partnersTrend: { trend: 100, trendDirection: 'down' },
    salesTrend: { trend: 100, trendDirection: 'up' },
    commissionTrend: { trend: 100, trendDirection: 'up' },
  });
  t.same(r.body.metrics, expectedPerformance(dsQ, TODAY - 6, TODAY, '7d').metrics);
  // The previous week seen as the current range: clicks 6 vs 0 before it.
  const prev = await get(`/api/tracking/performance/${Q.id}?dateFrom=${ago(13)}&dateTo=${ago(7)}`);
  t.match(prev.body.metrics, {
    totalClicks: 6,
    conversionRate: 0,
    averageOrderValue: 0,
    clicksTrend: { trend: 100, trendDirection: 'up' },
    partnersTrend: { trend: 100, trendDirection: 'up' },
    revenueTrend: { trend: 0, trendDirection: 'stable' },
  });
  // Five days: 5 clicks vs 1 in the five days before → 400 up.
  const up = await get(`/api/tracking/performance/${Q.id}?dateFrom=${ago(11)}&dateTo=${ago(7)}`);
  t.match(up.body.metrics, { totalClicks: 5, clicksTrend: { trend: 400, trendDirection: 'up' } });
  t.same(up.body.metrics, expectedPerformance(dsQ, TODAY - 11, TODAY - 7, 'custom').metrics);
});

t.test('performance: bad period and dates are 400', async (t) => {
  const cases: [string, string][] = [
    ['?period=14d', 'period must be one of 7d, 30d, 90d, all'],
    ['?period=', 'period must be one of 7d, 30d, 90d, all'],
    [`?dateFrom=${ago(3)}`, 'dateFrom and dateTo must be given together'],
    [`?dateTo=${ago(3)}&period=7d`, 'dateFrom and dateTo must be given together'],
    [`?dateFrom=${ago(1)}&dateTo=${ago(3)}`, 'dateFrom must not be after dateTo'],
    [
      `?dateFrom=nope&dateTo=${ago(3)}`,
      'dateFrom must be an ISO 8601 date or date-time (e.g. 2025-01-31 or 2025-01-31T12:00:00Z)',
    ],
    ['?dateFrom=2000-01-01&dateTo=2020-01-01', 'The date range must not exceed 3660 days'],
  ];
  for (const [qs, error] of cases) {
    const r = await get(`/api/tracking/performance/${P.id}${qs}`);
    t.equal(r.status, 400, qs);
    t.same(r.body, { error }, qs);
  }
});

// ---------------------------------------------------------------------------------------------------
// Auth

t.test('auth: session required, workspace visibility, roles, inactive membership', async (t) => {
  const paths = (id: number) => [
    `/api/tracking/status/${id}`,
    `/api/tracking/events/${id}`,
    `/api/tracking/performance/${id}`,
  ];
  const key = generateSecret('affk_');
  await sql`
    insert into api_keys (workspace_id, created_by, name, prefix, key_hash, key_masked, scopes)
    values (${W}, ${owner.userId}, 'dashboard test', 'affk_', ${hashSecret(key)}, ${maskSecret(key)}, ${['*']})`;
  const stranger = await signup(svc);
  const viewer = await memberOf(svc, sql, W, 'viewer');
  const member = await memberOf(svc, sql, W, 'member');
  const gone = await memberOf(svc, sql, W, 'member');
  await sql`update memberships set status = 'inactive' where user_id = ${gone.userId} and workspace_id = ${W}`;

  for (const p of paths(P.id)) {
    const none = await getJson(url(p));
    t.equal(none.status, 401, `${p}: no credentials`);
    t.type(none.body.error, 'string');
    const k = await getJson(url(p), bearer(key));
    t.equal(k.status, 401, `${p}: an affk_ key is not a dashboard session`);
    t.same(k.body, { error: 'A dashboard session is required' });
    t.equal((await getJson(url(p), bearer('sess_nope'))).status, 401, `${p}: unknown session`);
    t.equal((await getJson(url(p), bearer(P.token))).status, 401, `${p}: a tracking token`);
    const s = await get(p, stranger.session);
    t.equal(s.status, 404, `${p}: another workspace's program is not revealed`);
    t.type(s.body.error, 'string');
    t.equal((await get(p.replace(String(P.id), '999999999'))).status, 404, `${p}: unknown program`);
    t.equal((await get(p.replace(String(P.id), 'abc'))).status, 404, `${p}: not an id`);
    t.equal((await get(p)).status, 200, `${p}: owner`);
    t.equal((await get(p, member.session)).status, 200, `${p}: member`);
    t.equal((await get(p, gone.session)).status, 403, `${p}: deactivated member`);
  }
  t.equal((await get(`/api/tracking/status/${P.id}`, viewer.session)).status, 200, 'viewer: status');
  const ve = await get(`/api/tracking/events/${P.id}`, viewer.session);
  t.equal(ve.status, 403, 'viewer lacks tracking:list');
  t.type(ve.body.error, 'string');
  t.equal(
    (await get(`/api/tracking/performance/${P.id}`, viewer.session)).status,
    200,
    'viewer: performance',
  );
  const gp = await get(`/api/tracking/performance/${P.id}`, gone.session);
  t.same(gp.body, { error: 'Your membership of this workspace is inactive' });
  // Auth comes before validation: a stranger's bad query is still 404.
  t.equal((await get(`/api/tracking/events/${P.id}?pageSize=0`, stranger.session)).status, 404);
});

t.test('the OpenAPI document lists the dashboard reads', async (t) => {
  const r = await getJson(url('/api/v1/openapi.json'));
  const paths = r.body.paths as Record<string, unknown>;
  for (const p of ['status', 'events', 'performance']) t.ok(paths[`/api/tracking/${p}/{programId}`], p);
});
