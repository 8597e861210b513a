// The rules of the dashboard reads, pure where they can be: query parsing (exact 400 messages), the
// events paging plan, the performance window, totals, rates and trends, and the response bodies.
// The SQL is in dal.ts; routes.ts only wires them together.
import { HttpError } from '../../../../shared/http/server.ts';
import { isPlainObject } from '../../../../shared/json.ts';
import { parseId } from '../../common.ts';
import {
  DAY_US,
  dayEndIso,
  dayNumber,
  dayOfMs,
  dayOfUs,
  dayStartIso,
  dayString,
  parseRange,
} from './dates.ts';
import type { Range } from './dates.ts';
import type { Sql } from '../../../../shared/db/sql.ts';
import { createDashboardDal } from './dal.ts';
import type {
  Counts,
  DailyStatsRow,
  DashboardDal,
  EventRow,
  Kind,
  MemberFilter,
  PageWindow,
  StatusRow,
} from './dal.ts';

export const MAX_PAGE_SIZE = 100;
export const MAX_CUSTOM_DAYS = 3660;

export type { Counts, Kind, MemberFilter, PageWindow };
export const KINDS: readonly Kind[] = ['click', 'lead', 'conversion'];
const zero = (): Counts => ({ click: 0, lead: 0, conversion: 0 });

// ---------------------------------------------------------------------------------------------------
// Query string

/** The query string as an object; a parameter given twice is 400. */
export function queryOf(req: { query: unknown }): Record<string, unknown> {
  const q = isPlainObject(req.query) ? req.query : {};
  for (const [k, v] of Object.entries(q)) {
    if (Array.isArray(v)) throw new HttpError(400, `${k} must be given once`);
  }
  return q;
}

export const PAGE_ERROR = 'page must be an integer of at least 1';
export const PAGE_SIZE_ERROR = `pageSize must be an integer between 1 and ${MAX_PAGE_SIZE}`;
export const EVENT_TYPE_ERROR = 'eventType must be one of click, lead, conversion (or all)';
export const PERIOD_ERROR = 'period must be one of 7d, 30d, 90d, all';
export const PARTNER_ID_ERROR = 'partnerId must be a positive integer';
export const LINK_ID_ERROR = 'linkId must be a positive integer';

/**
 * A positive integer query parameter up to `max` (its decimal text, or the number the schema validator
 * made of plain digits), else `message`; absent is fine (the default).
 */
export const positiveError =
  (max: number, message: string) =>
  (v: unknown): string | null => {
    if (v === undefined) return null;
    const n = parseId(v);
    return n === null || n > max ? message : null;
  };

/** A positive integer query parameter up to `max`, `dflt` when absent; 400 with `message` otherwise. */
function positiveParam(q: Record<string, unknown>, name: string, dflt: number, max: number, message: string) {
  const v = q[name];
  if (v === undefined) return dflt;
  const error = positiveError(max, message)(v);
  if (error !== null) throw new HttpError(400, error);
  return parseId(v)!;
}

export interface EventsQuery {
  page: number;
  size: number;
  kinds: readonly Kind[];
  range: Range;
}

export function parseEventsQuery(q: Record<string, unknown>): EventsQuery {
  const page = positiveParam(q, 'page', 1, Number.MAX_SAFE_INTEGER, PAGE_ERROR);
  const size = positiveParam(q, 'pageSize', 10, MAX_PAGE_SIZE, PAGE_SIZE_ERROR);
  const et = q.eventType ?? 'all';
  if (et !== 'all' && !(KINDS as readonly unknown[]).includes(et)) {
    throw new HttpError(400, EVENT_TYPE_ERROR);
  }
  const kinds = et === 'all' ? KINDS : [et as Kind];
  return { page, size, kinds, range: parseRange(q) };
}

// ---------------------------------------------------------------------------------------------------
// Events paging plan. The range is cut into segments, newest first: whole UTC days (counted by the daily
// rollup) and at most two partial days at the edges of a date-time range (counted in SQL). The page is
// then read only from the segments it overlaps.

/** A stretch of the range; its event counts are known before any row is read. */
export interface Segment {
  lo: number;
  hi: number;
  counts: Counts;
}

export interface RangeSplit {
  /** Partial days to count in SQL, newest first. */
  partial: { lo: number; hi: number }[];
  /** The whole days to read from the rollup (null bound = unbounded), or null when there are none. */
  whole: { first: number | null; last: number | null } | null;
}

/** Splits an instant range into whole UTC days and the partial days at its edges. */
export function splitRange(range: Range): RangeSplit {
  const { lo, hi } = range;
  const loDay = lo === null ? null : dayOfUs(lo);
  const hiDay = hi === null ? null : dayOfUs(hi - 1);
  const loPartial = lo !== null && lo !== loDay! * DAY_US;
  const hiPartial = hi !== null && hi !== (hiDay! + 1) * DAY_US;
  const partial: { lo: number; hi: number }[] = [];
  let first = loDay;
  let last = hiDay;
  if (loDay !== null && loDay === hiDay) {
    if (loPartial || hiPartial) {
      partial.push({ lo: lo!, hi: hi! });
      first = loDay + 1; // no whole day at all
    }
  } else {
    if (hiPartial) {
      partial.push({ lo: hiDay! * DAY_US, hi: hi! });
      last = hiDay! - 1;
    }
    if (loPartial) {
      partial.push({ lo: lo!, hi: (loDay! + 1) * DAY_US });
      first = loDay! + 1;
    }
  }
  const none = first !== null && last !== null && first > last;
  return { partial, whole: none ? null : { first, last } };
}

/** A whole day of the rollup as a segment, counting only the wanted kinds. */
export function daySegment(
  day: number,
  c: { clicks: number; leads: number; sales: number },
  kinds: readonly Kind[],
): Segment {
  return {
    lo: day * DAY_US,
    hi: (day + 1) * DAY_US,
    counts: {
      click: kinds.includes('click') ? c.clicks : 0,
      lead: kinds.includes('lead') ? c.leads : 0,
      conversion: kinds.includes('conversion') ? c.sales : 0,
    },
  };
}

/** Disjoint segments newest first, those without events dropped. */
export function orderSegments(segs: Segment[]): Segment[] {
  return segs.filter((s) => KINDS.some((k) => s.counts[k] > 0)).sort((a, b) => b.lo - a.lo);
}

const sum = (s: Segment) => s.counts.click + s.counts.lead + s.counts.conversion;

/**
 * The page's total and window: segments entirely newer than the page are skipped (their events
 * subtracted from the offset), and so are those entirely older. window null = the page is past the end.
 */
export function planPage(
  segs: Segment[],
  pageNo: number,
  size: number,
): { total: number; window: PageWindow | null } {
  const total = segs.reduce((a, s) => a + sum(s), 0);
  const offset = (pageNo - 1) * size;
  if (offset >= total) return { total, window: null };
  let i = 0;
  let before = 0;
  while (before + sum(segs[i]!) <= offset) before += sum(segs[i++]!);
  const first = i;
  let through = before;
  const counts = zero();
  while (i < segs.length && through < offset + size) {
    for (const k of KINDS) counts[k] += segs[i]!.counts[k];
    through += sum(segs[i++]!);
  }
  const localOffset = offset - before;
  return {
    total,
    window: {
      lo: segs[i - 1]!.lo,
      hi: segs[first]!.hi,
      counts,
      offset: localOffset,
      limit: localOffset + size,
    },
  };
}

/**
 * One page of events, newest first, with the total of the range; with `partnerId`, only that partner's (its
 * clicks and its customers' leads and sales: the partner portal's events).
 */
export async function readEventsPage(
  dal: DashboardDal,
  programId: number,
  q: EventsQuery,
  partnerId: number | null = null,
) {
  const split = splitRange(q.range);
  const [days, ...partialCounts] = await Promise.all([
    split.whole === null ? [] : dal.dayCounts(programId, split.whole.first, split.whole.last, partnerId),
    ...split.partial.map((r) => dal.countRange(programId, q.kinds, r.lo, r.hi, partnerId)),
  ]);
  const segs = orderSegments([
    ...split.partial.map((r, i) => ({ ...r, counts: partialCounts[i]! })),
    ...days.map((d) => daySegment(d.day, d, q.kinds)),
  ]);
  const { total, window } = planPage(segs, q.page, q.size);
  const rows = window === null ? [] : await dal.eventRows(programId, window, q.size, partnerId);
  return { total, rows };
}

export function toEvent(r: EventRow): Record<string, unknown> {
  const base = {
    id: r.id,
    event_type: r.kind,
    timestamp: r.ts.toISOString(),
    createdAt: r.created_at.toISOString(),
  };
  if (r.kind === 'click') {
    return {
      ...base,
      click_id: r.click_id,
      session_id: r.session_id,
      page_url: r.page_url,
      referrer_url: r.referrer_url,
      geo_country: r.geo_country,
      geo_region: r.geo_region,
      geo_city: r.geo_city,
      device_type: r.device_type,
      device_os: r.device_os,
      browser_name: r.browser_name,
      converted: r.converted === true,
    };
  }
  if (r.kind === 'lead') {
    return {
      ...base,
      click_id: r.click_id,
      customer_key: r.customer_key,
      session_id: r.session_id,
      page_url: r.page_url,
      converted: r.converted === true,
    };
  }
  return {
    ...base,
    click_id: r.click_id,
    amount_cents: Number(r.amount_cents),
    currency: r.currency,
    sale_type: r.sale_type,
    payment_status: r.payment_status,
    processor_event_id: r.transaction_id,
    is_recurring: r.is_recurring,
    line_items: r.line_items ?? null,
    subscription_id: r.subscription_id,
    subscription_interval: r.subscription_interval,
    product_id: r.product_id,
  };
}

export function eventsBody(q: EventsQuery, total: number, rows: EventRow[]) {
  return {
    data: rows.map(toEvent),
    meta: { pagination: { page: q.page, pageSize: q.size, pageCount: Math.ceil(total / q.size), total } },
  };
}

// ---------------------------------------------------------------------------------------------------
// Performance

const PERIOD_DAYS = { '7d': 7, '30d': 30, '90d': 90 } as const;
export type Period = keyof typeof PERIOD_DAYS | 'all';

/** The requested window: a custom range of whole days (first..last), or a named period. */
export type PerformanceQuery = { period: 'custom'; first: number; last: number } | { period: Period };

/**
 * The rules of the performance query a schema cannot state, checked before its fields: dateFrom and dateTo
 * come together, and then period is ignored; without them, period is checked.
 */
export function checkPerformanceShape(q: Record<string, unknown>): void {
  if (q.dateFrom !== undefined || q.dateTo !== undefined) {
    if (q.dateFrom === undefined || q.dateTo === undefined) {
      throw new HttpError(400, 'dateFrom and dateTo must be given together');
    }
    return;
  }
  const p = q.period ?? '7d';
  if (p !== 'all' && !(typeof p === 'string' && Object.hasOwn(PERIOD_DAYS, p))) {
    throw new HttpError(400, PERIOD_ERROR);
  }
}

export function parsePerformanceQuery(q: Record<string, unknown>): PerformanceQuery {
  checkPerformanceShape(q);
  if (q.dateFrom !== undefined || q.dateTo !== undefined) {
    const range = parseRange(q);
    const first = dayOfUs(range.lo!);
    const last = dayOfUs(range.hi! - 1);
    if (last - first + 1 > MAX_CUSTOM_DAYS) {
      throw new HttpError(400, `The date range must not exceed ${MAX_CUSTOM_DAYS} days`);
    }
    return { period: 'custom', first, last };
  }
  return { period: (q.period ?? '7d') as Period };
}

/** The days of a named period ending today; `all` starts at the program's creation day. */
export function periodDays(
  period: Period,
  today: number,
  createdDay: number,
): { first: number; last: number } {
  if (period === 'all') return { first: Math.min(today, createdDay), last: today };
  return { first: today - PERIOD_DAYS[period] + 1, last: today };
}

/** The previous period: as many days, just before. */
export function previousDays(first: number, last: number): { first: number; last: number } {
  return { first: first - (last - first + 1), last: first - 1 };
}

/** n / d * 100 rounded half up to `decimals` (n, d >= 0). */
export function percent(n: number, d: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.round((n * 100 * f) / d) / f;
}

/**
 * Direction compares the raw totals (up / down / stable when equal); the value is
 * |current - previous| / previous * 100 to 1 decimal, 100 when previous is 0 and current > 0.
 */
export function trendOf(current: number, previous: number): { trend: number; trendDirection: string } {
  if (previous === 0) {
    return current > 0 ? { trend: 100, trendDirection: 'up' } : { trend: 0, trendDirection: 'stable' };
  }
  return {
    trend: percent(Math.abs(current - previous), previous, 1),
    trendDirection: current > previous ? 'up' : current < previous ? 'down' : 'stable',
  };
}

export interface DayStats {
  clicks: number;
  leads: number;
  conversions: number;
  sales: number;
  revenueCents: number;
  commissionCents: number;
  partners: number;
}

const noStats = (): DayStats => ({
  clicks: 0,
  leads: 0,
  conversions: 0,
  sales: 0,
  revenueCents: 0,
  commissionCents: 0,
  partners: 0,
});

/** Rollup rows and new-partner counts by day number. */
export function statsByDay(
  stats: DailyStatsRow[],
  partners: { day: string; n: string }[],
): Map<number, DayStats> {
  const byDay = new Map<number, DayStats>();
  const at = (d: number) => byDay.get(d) ?? byDay.set(d, noStats()).get(d)!;
  for (const s of stats) {
    const t = at(dayNumber(s.day));
    t.clicks = Number(s.clicks);
    t.leads = Number(s.leads);
    t.conversions = Number(s.conversions);
    t.sales = Number(s.sales);
    t.revenueCents = Number(s.revenue_cents);
    t.commissionCents = Number(s.commission_cents);
  }
  for (const p of partners) at(dayNumber(p.day)).partners = Number(p.n);
  return byDay;
}

export function totalsOf(byDay: Map<number, DayStats>, from: number, to: number): DayStats {
  const t = noStats();
  for (const [d, s] of byDay) {
    if (d < from || d > to) continue;
    for (const k of Object.keys(t) as (keyof DayStats)[]) t[k] += s[k];
  }
  return t;
}

/** The performance answer for days first..last, compared with the period of equal length before it. */
export function performanceBody(
  period: Period | 'custom',
  first: number,
  last: number,
  byDay: Map<number, DayStats>,
) {
  const prev = previousDays(first, last);
  const data = [];
  for (let d = first; d <= last; d++) {
    const s = byDay.get(d) ?? noStats();
    const date = dayString(d);
    data.push({
      date,
      period: date,
      clicks: s.clicks,
      leads: s.leads,
      conversions: s.conversions,
      revenue: s.revenueCents / 100,
      partners: s.partners,
      sales: 0,
      commission: s.commissionCents / 100,
    });
  }
  const cur = totalsOf(byDay, first, last);
  const was = totalsOf(byDay, prev.first, prev.last);
  return {
    data,
    metrics: {
      totalClicks: cur.clicks,
      totalLeads: cur.leads,
      totalConversions: cur.conversions,
      totalRevenue: cur.revenueCents / 100,
      conversionRate: cur.clicks === 0 ? 0 : percent(cur.conversions, cur.clicks, 2),
      averageOrderValue: cur.conversions === 0 ? 0 : Math.round(cur.revenueCents / cur.conversions) / 100,
      totalPartners: cur.partners,
      totalSales: cur.sales,
      totalPartnersCommission: cur.commissionCents / 100,
      clicksTrend: trendOf(cur.clicks, was.clicks),
      leadsTrend: trendOf(cur.leads, was.leads),
      conversionsTrend: trendOf(cur.conversions, was.conversions),
      revenueTrend: trendOf(cur.revenueCents, was.revenueCents),
      partnersTrend: trendOf(cur.partners, was.partners),
      salesTrend: trendOf(cur.sales, was.sales),
      commissionTrend: trendOf(cur.commissionCents, was.commissionCents),
    },
    meta: {
      period,
      dateFrom: dayStartIso(first),
      dateTo: dayEndIso(last),
      previousPeriod: { dateFrom: dayStartIso(prev.first), dateTo: dayEndIso(prev.last) },
    },
  };
}

/** The days of a performance query (first..last), today being `today` (a day number, UTC). */
export async function performanceDays(
  dal: Pick<DashboardDal, 'programCreatedAt'>,
  programId: number,
  q: PerformanceQuery,
  today: number,
): Promise<{ first: number; last: number }> {
  if (q.period === 'custom') return q;
  const created = q.period === 'all' ? dayOfMs((await dal.programCreatedAt(programId)).getTime()) : today;
  return periodDays(q.period, today, created);
}

/**
 * The performance answer (spec 4.7) of a program for `q` (parsePerformanceQuery), counting everything, or
 * with `filter` only what one partner or one link brought: their clicks, their customers' leads and
 * conversions, their sales' revenue and commission, and their own partner-program record as `partners`.
 * Same shape either way. The filter is not checked here: a partner or link that is not the program's (or
 * a link that is not the partner's) counts zeros; the callers answer those 404 first. Reads O(days).
 *
 * This is the one place performance is computed: GET /api/tracking/performance (with its partnerId /
 * linkId filters) and the partner portal's performance both call it.
 */
export async function readPerformance(
  sql: Sql,
  programId: number,
  q: PerformanceQuery,
  filter: MemberFilter = {},
  nowMs: number = Date.now(),
): Promise<ReturnType<typeof performanceBody>> {
  const dal = createDashboardDal(sql);
  const { first, last } = await performanceDays(dal, programId, q, dayOfMs(nowMs));
  const prev = previousDays(first, last);
  const [stats, partners] = await Promise.all([
    dal.dailyStats(programId, prev.first, last, filter),
    dal.partnersByDay(programId, prev.first, last, filter),
  ]);
  return performanceBody(q.period, first, last, statsByDay(stats, partners));
}

/** The partnerId / linkId filters of a validated query (parseId: the schema let only positive integers in). */
export function memberFilterOf(q: Record<string, unknown>): MemberFilter {
  return {
    partnerId: q.partnerId === undefined ? null : parseId(q.partnerId),
    linkId: q.linkId === undefined ? null : parseId(q.linkId),
  };
}

export const PARTNER_NOT_FOUND = 'Partner not found';
export const LINK_NOT_FOUND = 'Link not found';

/** 404 unless the filter's partner and link are the program's (and the link is the partner's). */
export async function checkMemberFilter(sql: Sql, programId: number, filter: MemberFilter): Promise<void> {
  if ((filter.partnerId ?? null) === null && (filter.linkId ?? null) === null) return;
  const found = await createDashboardDal(sql).memberExists(programId, filter);
  if (!found.partner) throw new HttpError(404, PARTNER_NOT_FOUND);
  if (!found.link) throw new HttpError(404, LINK_NOT_FOUND);
}

// ---------------------------------------------------------------------------------------------------
// Status

export function statusBody(programId: string, r: StatusRow, now: Date) {
  const latest = (eid: string | null, ts: Date | null, created: Date | null) =>
    eid === null ? null : { id: eid, timestamp: ts!.toISOString(), createdAt: created!.toISOString() };
  const connected = r.pc_status === 'connected';
  return {
    data: {
      programId,
      stepStatuses: {
        pageview: r.click_n > 0 ? 'complete' : 'pending',
        referrals: r.lead_n > 0 ? 'complete' : 'pending',
        payments: connected ? 'complete' : 'pending',
      },
      statistics: {
        pageview: {
          testEventCount: r.click_n,
          hasTestEvents: r.click_n > 0,
          latestTestEvent: latest(r.click_id, r.click_ts, r.click_created),
        },
        referrals: {
          testEventCount: r.lead_n,
          hasTestEvents: r.lead_n > 0,
          latestTestEvent: latest(r.lead_id, r.lead_ts, r.lead_created),
        },
        payments: {
          processorConnectionStatus: r.pc_status ?? 'not_connected',
          isProcessorConnected: connected,
          processorAccountId: r.account_id,
          chargesEnabled: r.charges_enabled === true,
          payoutsEnabled: r.payouts_enabled === true,
          detailsSubmitted: r.details_submitted === true,
          connectionDate: r.connected_at === null ? null : r.connected_at.toISOString(),
        },
      },
      hasPartners: r.has_partners,
      lastUpdated: now.toISOString(),
    },
  };
}
