// The dashboard's SQL. How the reads stay fast at tens of millions of events:
// - performance reads program_daily_stats (one row per program and UTC day, kept by the workers in the
//   transaction of the events it counts) and partner_programs grouped by day: O(days), not O(events).
//   Filtered by partner or link, it reads that key's rows of program_daily_breakdown (the same counters,
//   kept the same way) through its partial index (program_id, dimension, key, day): O(days) too.
// - events: counts come from the same rollup for whole days and from countRange for partial days (bounded
//   by one day of events each); the page (service.ts planPage) is read with a UNION ALL of the three event
//   tables, each branch in index order (program_id, time desc, id desc) and limited to offset + pageSize
//   rows, then merged, ordered and cut with LIMIT/OFFSET in SQL; only the page's rows are joined to their
//   details. This relies on the rollup invariant; the integration test checks every total against a plain
//   count of the raw rows.
// - status: partial indexes on test events (0004_dashboard_indexes.sql) make the "up to 10" counts and
//   the latest test event index lookups even when a program has millions of real events.
import type { PendingQuery, Row } from 'postgres';
import type { Sql } from '../../../../shared/db/sql.ts';
import { dayNumber, dayString, dayStartIso, isoMicros } from './dates.ts';

export type Kind = 'click' | 'lead' | 'conversion';
export type Counts = Record<Kind, number>;

/** What to read for one page (service.ts planPage): the instant range [lo, hi), the kinds present in it. */
export interface PageWindow {
  lo: number;
  hi: number;
  counts: Counts;
  /** Rows of the window to skip, then the page size to return. */
  offset: number;
  /** Rows each event table must yield at most: offset + page size. */
  limit: number;
}

export interface StatusRow {
  click_n: number;
  click_id: string | null;
  click_ts: Date | null;
  click_created: Date | null;
  lead_n: number;
  lead_id: string | null;
  lead_ts: Date | null;
  lead_created: Date | null;
  pc_status: string | null;
  account_id: string | null;
  charges_enabled: boolean | null;
  payouts_enabled: boolean | null;
  details_submitted: boolean | null;
  connected_at: Date | null;
  has_partners: boolean;
  /** The program's non-test bot and prefetch clicks (stored, counted nowhere). */
  filtered_n: number;
}

export interface DailyStatsRow {
  day: string;
  clicks: string;
  leads: string;
  conversions: string;
  sales: string;
  revenue_cents: string;
  commission_cents: string;
}

export interface EventRow extends Row {
  kind: Kind;
  id: string;
  ts: Date;
  created_at: Date;
  click_id: string | null;
  session_id: string | null;
  page_url: string | null;
  referrer_url: string | null;
  geo_country: string | null;
  geo_region: string | null;
  geo_city: string | null;
  device_type: string | null;
  device_os: string | null;
  browser_name: string | null;
  quality: string | null;
  customer_key: string | null;
  converted: boolean | null;
  amount_cents: string | null;
  currency: string | null;
  sale_type: string | null;
  payment_status: string | null;
  transaction_id: string | null;
  is_recurring: boolean | null;
  line_items: unknown;
  subscription_id: string | null;
  subscription_interval: string | null;
  product_id: string | null;
  coupon_code: string | null;
}

/** Only one partner's or one link's events (the performance filters); both: that link, if it is the partner's. */
export interface MemberFilter {
  partnerId?: number | null;
  linkId?: number | null;
}

export type DashboardDal = ReturnType<typeof createDashboardDal>;

export function createDashboardDal(sql: Sql) {
  // As text: a timestamptz parameter would go through a JS Date and lose the microseconds.
  const ts = (us: number) => sql`${isoMicros(us)}::text::timestamptz`;
  const day = (d: number) => sql`${dayString(d)}::text::date`;
  // One partner's events (the partner portal): its clicks, and the leads and sales of its customers, the
  // same events its key of program_daily_breakdown counts. `e` is the event table's alias.
  const partnerFilter = (partnerId: number | null) =>
    partnerId === null
      ? { click: sql``, customer: sql`` }
      : {
          // A partner sees the clicks that count: its bots and prefetches are left out (CONTRACT part three).
          click: sql`and e.partner_id = ${partnerId} and e.quality = 'human'`,
          customer: sql`and exists (select 1 from customers cu where cu.id = e.customer_id and cu.partner_id = ${partnerId})`,
        };

  return {
    /** Test-event counts (up to 10) and latest test events, the processor connection, partners. */
    async status(programId: number, workspaceId: number): Promise<StatusRow> {
      const id = programId;
      const [row] = await sql<StatusRow[]>`
        select
          (select count(*)::int from (select 1 from click_events where program_id = ${id} and is_test limit 10) x) as click_n,
          lc.id as click_id, lc.ts as click_ts, lc.created_at as click_created,
          (select count(*)::int from (select 1 from lead_events where program_id = ${id} and is_test limit 10) x) as lead_n,
          ll.id as lead_id, ll.ts as lead_ts, ll.created_at as lead_created,
          pc.status as pc_status, pc.account_id, pc.charges_enabled, pc.payouts_enabled, pc.details_submitted,
          pc.connected_at,
          exists (select 1 from partner_programs where program_id = ${id} and status = 'approved') as has_partners,
          (select count(*)::int from click_events
           where program_id = ${id} and quality <> 'human' and not is_test) as filtered_n
        from (select 1) one
        left join lateral (
          select event_id::text as id, click_timestamp as ts, created_at from click_events
          where program_id = ${id} and is_test order by click_timestamp desc, event_id desc limit 1
        ) lc on true
        left join lateral (
          select id::text as id, lead_timestamp as ts, created_at from lead_events
          where program_id = ${id} and is_test order by lead_timestamp desc, id desc limit 1
        ) ll on true
        left join processor_connections pc on pc.workspace_id = ${workspaceId}`;
      return row!;
    },

    async programCreatedAt(programId: number): Promise<Date> {
      const [pr] = await sql<{ created_at: Date }[]>`select created_at from programs where id = ${programId}`;
      return pr!.created_at;
    },

    /**
     * Rollup rows of days first..last: the program's (program_daily_stats), or with a filter only one
     * partner's or one link's (their keys of program_daily_breakdown, the same counters). A link that is
     * not the given partner's has no rows.
     */
    dailyStats(programId: number, first: number, last: number, filter: MemberFilter = {}) {
      const { partnerId = null, linkId = null } = filter;
      if (linkId === null && partnerId === null) {
        return sql<DailyStatsRow[]>`
          select day::text, clicks::text, leads::text, conversions::text, sales::text, revenue_cents::text,
                 commission_cents::text
          from program_daily_stats
          where program_id = ${programId} and day between ${day(first)} and ${day(last)}`;
      }
      const [dimension, key] = linkId !== null ? ['link', linkId] : ['partner', partnerId!];
      return sql<DailyStatsRow[]>`
        select day::text, clicks::text, leads::text, conversions::text, sales::text, revenue_cents::text,
               commission_cents::text
        from program_daily_breakdown
        where program_id = ${programId} and dimension = ${dimension} and key = ${String(key)}
          and day between ${day(first)} and ${day(last)}
          ${
            linkId !== null && partnerId !== null
              ? sql`and exists (select 1 from referral_links where id = ${linkId} and partner_id = ${partnerId})`
              : sql``
          }`;
    },

    /**
     * Partners who joined the program on each UTC day of first..last; with a filter, only that partner (a
     * link's: the link's partner).
     */
    partnersByDay(programId: number, first: number, last: number, filter: MemberFilter = {}) {
      const { partnerId = null, linkId = null } = filter;
      return sql<{ day: string; n: string }[]>`
        select (created_at at time zone 'UTC')::date::text as day, count(*)::text as n
        from partner_programs
        where program_id = ${programId}
          and created_at >= ${dayStartIso(first)}::text::timestamptz and created_at < ${dayStartIso(last + 1)}::text::timestamptz
          ${partnerId === null ? sql`` : sql`and partner_id = ${partnerId}`}
          ${linkId === null ? sql`` : sql`and id = (select partner_program_id from referral_links where id = ${linkId})`}
        group by 1`;
    },

    /** The partner (when given) and link (when given) are the program's, and the link is the partner's. */
    async memberExists(
      programId: number,
      filter: MemberFilter,
    ): Promise<{ partner: boolean; link: boolean }> {
      const { partnerId = null, linkId = null } = filter;
      const [row] = await sql<{ partner: boolean; link: boolean }[]>`
        select
          ${partnerId === null ? sql`true` : sql`exists (select 1 from partner_programs where program_id = ${programId} and partner_id = ${partnerId})`} as partner,
          ${
            linkId === null
              ? sql`true`
              : sql`exists (select 1 from referral_links where id = ${linkId} and program_id = ${programId}
                     ${partnerId === null ? sql`` : sql`and partner_id = ${partnerId}`})`
          } as link`;
      return row!;
    },

    /**
     * Non-test click, lead and sale counts of each rollup day in first..last (null = unbounded), newest first;
     * with `partnerId`, that partner's (its key of program_daily_breakdown: its clicks, its customers' leads
     * and sales).
     */
    async dayCounts(
      programId: number,
      first: number | null,
      last: number | null,
      partnerId: number | null = null,
    ) {
      const from =
        partnerId === null
          ? sql`program_daily_stats where program_id = ${programId}`
          : sql`program_daily_breakdown where program_id = ${programId} and dimension = 'partner' and key = ${String(partnerId)}`;
      const rows = await sql<{ day: string; clicks: string; leads: string; sales: string }[]>`
        select day::text, clicks::text, leads::text, sales::text from ${from}
          ${first === null ? sql`` : sql`and day >= ${day(first)}`}
          ${last === null ? sql`` : sql`and day <= ${day(last)}`}
        order by day desc`;
      return rows.map((r) => ({
        day: dayNumber(r.day),
        clicks: Number(r.clicks),
        leads: Number(r.leads),
        sales: Number(r.sales),
      }));
    },

    /**
     * The non-test bot and prefetch clicks of each UTC day of first..last (null = unbounded) and quality,
     * from the small partial index click_events_filtered; with a filter, one partner's or one link's.
     */
    filteredByDay(programId: number, first: number | null, last: number | null, filter: MemberFilter = {}) {
      const { partnerId = null, linkId = null } = filter;
      return sql<{ day: string; quality: 'bot' | 'prefetch'; n: string }[]>`
        select (click_timestamp at time zone 'UTC')::date::text as day, quality, count(*)::text as n
        from click_events
        where program_id = ${programId} and quality <> 'human' and not is_test
          ${first === null ? sql`` : sql`and click_timestamp >= ${dayStartIso(first)}::text::timestamptz`}
          ${last === null ? sql`` : sql`and click_timestamp < ${dayStartIso(last + 1)}::text::timestamptz`}
          ${partnerId === null ? sql`` : sql`and partner_id = ${partnerId}`}
          ${linkId === null ? sql`` : sql`and link_id = ${linkId}`}
        group by 1, 2`;
    },

    /**
     * Non-test events of each wanted kind in [lo, hi), counted in SQL (used for partial days only); with
     * `partnerId`, only that partner's.
     */
    async countRange(
      programId: number,
      kinds: readonly Kind[],
      lo: number,
      hi: number,
      partnerId: number | null = null,
    ): Promise<Counts> {
      const f = partnerFilter(partnerId);
      const c = kinds.includes('click')
        ? sql`(select count(*) from click_events e where program_id = ${programId} and not is_test
                 and click_timestamp >= ${ts(lo)} and click_timestamp < ${ts(hi)} ${f.click})`
        : sql`0`;
      const l = kinds.includes('lead')
        ? sql`(select count(*) from lead_events e where program_id = ${programId} and not is_test
                 and lead_timestamp >= ${ts(lo)} and lead_timestamp < ${ts(hi)} ${f.customer})`
        : sql`0`;
      const s = kinds.includes('conversion')
        ? sql`(select count(*) from sales e where program_id = ${programId} and not is_test
                 and sale_date >= ${ts(lo)} and sale_date < ${ts(hi)} ${f.customer})`
        : sql`0`;
      const [row] = await sql<{ c: string; l: string; s: string }[]>`
        select ${c}::int8::text as c, ${l}::int8::text as l, ${s}::int8::text as s`;
      return { click: Number(row!.c), lead: Number(row!.l), conversion: Number(row!.s) };
    },

    /**
     * The page's rows: the window's events merged newest first, cut to `size`, joined to their details; with
     * `partnerId`, only that partner's.
     */
    eventRows(programId: number, w: PageWindow, size: number, partnerId: number | null = null) {
      const { lo, hi, limit: n } = w;
      const f = partnerFilter(partnerId);
      const branches: PendingQuery<Row[]>[] = [];
      if (w.counts.click > 0)
        branches.push(sql`(select 'click'::text as kind, click_timestamp as ts, event_id as id from click_events e
          where program_id = ${programId} and not is_test and click_timestamp >= ${ts(lo)} and click_timestamp < ${ts(hi)} ${f.click}
          order by click_timestamp desc, event_id desc limit ${n})`);
      if (w.counts.lead > 0)
        branches.push(sql`(select 'lead'::text as kind, lead_timestamp as ts, id from lead_events e
          where program_id = ${programId} and not is_test and lead_timestamp >= ${ts(lo)} and lead_timestamp < ${ts(hi)} ${f.customer}
          order by lead_timestamp desc, id desc limit ${n})`);
      if (w.counts.conversion > 0)
        branches.push(sql`(select 'conversion'::text as kind, sale_date as ts, id from sales e
          where program_id = ${programId} and not is_test and sale_date >= ${ts(lo)} and sale_date < ${ts(hi)} ${f.customer}
          order by sale_date desc, id desc limit ${n})`);
      const union = branches.reduce((a, b) => sql`${a} union all ${b}`);

      return sql<EventRow[]>`
        with k as (
          select kind, ts, id from (${union}) u
          order by ts desc, id desc, kind
          limit ${size} offset ${w.offset}
        )
        select k.kind, k.id::text as id, k.ts,
               coalesce(c.created_at, l.created_at, s.created_at) as created_at,
               coalesce(c.click_id, l.click_id, s.click_id) as click_id,
               coalesce(c.session_id, l.session_id) as session_id,
               coalesce(c.page_url, l.page_url) as page_url,
               c.referrer_url, c.geo_country, c.geo_region, c.geo_city, c.device_type, c.device_os, c.browser_name,
               c.quality, l.customer_key,
               coalesce(c.converted, l.converted) as converted,
               s.amount_cents::text as amount_cents, s.currency, s.sale_type, s.payment_status, s.transaction_id,
               s.is_recurring, s.line_items, s.subscription_id, s.subscription_interval, s.product_id,
               s.coupon_code
        from k
        left join lateral (
          select e.created_at, e.click_id, e.session_id, e.page_url, e.referrer_url, e.geo_country, e.geo_region,
                 e.geo_city, e.device_type, e.device_os, e.browser_name, e.quality,
                 coalesce(cu.customer_status = 'conversion', false) as converted
          from click_events e left join customers cu on cu.click_id = e.click_id
          where k.kind = 'click' and e.program_id = ${programId} and e.click_timestamp = k.ts and e.event_id = k.id
        ) c on true
        left join lateral (
          select e.created_at, e.click_id, e.session_id, e.page_url, e.customer_key,
                 coalesce(cu.customer_status = 'conversion', false) as converted
          from lead_events e left join customers cu on cu.id = e.customer_id
          where k.kind = 'lead' and e.id = k.id
        ) l on true
        left join lateral (
          select e.* from sales e where k.kind = 'conversion' and e.id = k.id
        ) s on true
        order by k.ts desc, k.id desc, k.kind`;
    },
  };
}
